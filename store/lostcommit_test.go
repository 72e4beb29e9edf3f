package store_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"xbo/store"
	"xbo/store/storetest"
)

// commitCutter is a TCP proxy in front of PostgreSQL that can cut the
// connection at the next COMMIT a client sends: either after the server
// received it and answered (the commit happened; its answer is lost), or
// before it reached the server (which then rolls the transaction back). It
// reads the protocol's framing only: the startup messages, then messages of
// a type byte and a length.
type commitCutter struct {
	ln     net.Listener
	target string
	mode   atomic.Int32 // cutNone, cutAnswer or cutRequest, for the next COMMIT
	cuts   atomic.Int32 // cuts made
	wg     sync.WaitGroup
}

const (
	cutNone int32 = iota
	cutAnswer
	cutRequest
)

// newCommitCutter proxies to the host of dsn and returns the data source
// that goes through it (without TLS, so that the messages can be read).
func newCommitCutter(t *testing.T, dsn string) (*commitCutter, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &commitCutter{ln: ln, target: u.Host}
	c.wg.Add(1)
	go c.accept()
	t.Cleanup(func() { ln.Close(); c.wg.Wait() })
	u.Host = ln.Addr().String()
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	return c, u.String()
}

func (c *commitCutter) accept() {
	defer c.wg.Done()
	for {
		client, err := c.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", c.target)
		if err != nil {
			client.Close()
			continue
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.pump(client, server)
		}()
	}
}

// pump relays one connection until either side closes it or a cut.
func (c *commitCutter) pump(client, server net.Conn) {
	defer client.Close()
	defer server.Close()
	var dropAnswers atomic.Bool
	answered := make(chan struct{}, 1)
	go func() { // server → client
		buf := make([]byte, 32<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 {
				if dropAnswers.Load() {
					select {
					case answered <- struct{}{}:
					default:
					}
				} else if _, werr := client.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				client.Close()
				return
			}
		}
	}()
	// client → server: the untyped startup messages first.
	for {
		head := make([]byte, 8)
		if _, err := io.ReadFull(client, head); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(head[:4])-8)
		if _, err := io.ReadFull(client, body); err != nil {
			return
		}
		if _, err := server.Write(append(head, body...)); err != nil {
			return
		}
		if code := binary.BigEndian.Uint32(head[4:]); code == 196608 { // protocol 3.0: the startup message
			break
		}
	}
	for {
		head := make([]byte, 5)
		if _, err := io.ReadFull(client, head); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(head[1:])-4)
		if _, err := io.ReadFull(client, body); err != nil {
			return
		}
		if head[0] == 'Q' && strings.EqualFold(strings.TrimRight(string(body), "\x00"), "commit") {
			switch mode := c.mode.Load(); {
			case mode == cutAnswer && c.mode.CompareAndSwap(mode, cutNone):
				dropAnswers.Store(true)
				if _, err := server.Write(append(head, body...)); err != nil {
					return
				}
				select {
				case <-answered:
				case <-time.After(10 * time.Second):
				}
				c.cuts.Add(1)
				return
			case mode == cutRequest && c.mode.CompareAndSwap(mode, cutNone):
				c.cuts.Add(1)
				return
			}
		}
		if _, err := server.Write(append(head, body...)); err != nil {
			return
		}
	}
}

// A commit whose answer is lost with the connection is resolved by asking
// PostgreSQL whether the transaction committed: an ask, an enqueue or a new
// study that did commit succeeds once, and one that did not runs again; a
// tell, idempotent, simply runs again. Before, each answered "store: commit:
// unexpected EOF" (and a caller repeating the ask got a second trial).
func TestPostgresLostCommitAnswers(t *testing.T) {
	cutter, dsn := newCommitCutter(t, storetest.PostgresDSN(t))
	ctx := context.Background()
	s, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, mode := range []int32{cutAnswer, cutRequest} {
		name := map[int32]string{cutAnswer: "answer-lost", cutRequest: "request-lost"}[mode]
		t.Run(name, func(t *testing.T) {
			cut := func(what string, op func() error) {
				t.Helper()
				before := cutter.cuts.Load()
				cutter.mode.Store(mode)
				if err := op(); err != nil {
					t.Fatalf("%s with its commit cut: %v", what, err)
				}
				if cutter.cuts.Load() != before+1 {
					t.Fatalf("%s: the commit was not cut", what)
				}
			}
			cut("create study", func() error {
				_, err := s.CreateStudy(ctx, store.NewStudy{Name: name, Direction: "minimize", Space: []byte(spaceJSON), Now: t0})
				return err
			})
			var tr *store.Trial
			cut("ask", func() (err error) {
				tr, err = askKeyed(s, name, "w", name+"-k", t0, 0)
				return err
			})
			cut("enqueue", func() error {
				_, err := s.AddTrial(ctx, name, store.NewTrial{Params: map[string]any{"x": 0.25}, Now: t0})
				return err
			})
			// A pruned tell goes through a transaction (the direct one-statement
			// tell has no COMMIT).
			cut("tell", func() error {
				_, _, err := s.Tell(ctx, name, tr.Number, store.Result{State: store.Pruned, Value: 0.5, Now: t0})
				return err
			})
			all, _, err := s.Trials(ctx, name, store.TrialQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 2 || all[0].Number != tr.Number || all[0].State != store.Pruned || all[0].Value == nil || *all[0].Value != 0.5 ||
				all[1].State != store.Pending || all[1].Acquisition != "enqueued" {
				t.Fatalf("want the asked trial pruned at 0.5 and one enqueued trial, got %+v", all)
			}
			if k, err := s.AskedWith(ctx, []string{name + "-k"}); err != nil || k[name+"-k"].Trial.Number != tr.Number {
				t.Errorf("the ask's key: %+v, %v", k, err)
			}
		})
	}
}
