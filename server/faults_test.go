package server_test

// The fault-injection suite: a real `xbo serve` process under concurrent
// ask/tell traffic while it is killed with SIGKILL (both backends), while
// PostgreSQL terminates its connections, and while its SQLite file's disk is
// full. After each fault the study is drained and checked: every acknowledged
// tell is stored with its value, no trial was handed to two workers, and no
// configuration was evaluated twice through a requeued copy. The workers use
// package client, which retries asks (with an idempotency key) and tells, so
// after a fault an ask whose answer was lost gets its trial back and none is
// left to expire. It is slow, so it runs only when asked:
//
//	XBO_FAULTS=1 go test ./server -run Faults -v
//
// XBO_FAULTS_KILLS (default 6) sets the kills per backend, XBO_FAULTS_DROPS
// (default 8) the rounds of PostgreSQL connection drops. A last fault stops
// PostgreSQL for 30 s under `xbo run --url` and the Python client
// (faults_outage_test.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"xbo/client"
	"xbo/store/storetest"
)

// faultTrialTimeout is the servers' --trial-timeout: trials whose worker or
// answer was lost in a fault expire and are queued again this soon.
const faultTrialTimeout = 2 * time.Second

func TestFaults(t *testing.T) {
	if os.Getenv("XBO_FAULTS") != "1" {
		t.Skip("fault-injection suite: run with XBO_FAULTS=1 go test ./server -run Faults -v")
	}
	bin := buildXBO(t, t.TempDir())
	kills := envInt(t, "XBO_FAULTS_KILLS", 6)
	drops := envInt(t, "XBO_FAULTS_DROPS", 8)
	t.Run("Kill9SQLite", func(t *testing.T) {
		dir := t.TempDir()
		faultKillLoop(t, bin, dir, filepath.Join(dir, "xbo.db"), kills)
	})
	t.Run("Kill9Postgres", func(t *testing.T) {
		faultKillLoop(t, bin, t.TempDir(), storetest.PostgresDSN(t), kills)
	})
	t.Run("PostgresConnectionDrops", func(t *testing.T) {
		faultConnectionDrops(t, bin, drops)
	})
	t.Run("DiskFullSQLite", func(t *testing.T) {
		faultDiskFull(t, bin)
	})
	t.Run("PostgresOutageUnderRunAndPython", func(t *testing.T) {
		faultOutageUnderRun(t, bin, 30*time.Second)
	})
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// countingTransport counts what the clients of one fault saw on the wire:
// answers with a 5xx status (with their distinct messages) and requests
// that got no answer at all.
type countingTransport struct {
	base          http.RoundTripper
	status5xx     atomic.Int64
	noAnswer      atomic.Int64
	replayed      atomic.Int64 // asks answered with the trial of an earlier attempt
	mu            sync.Mutex
	messages5xx   map[string]int
	statusesSeen5 map[int]int
}

func newCountingTransport() *countingTransport {
	return &countingTransport{base: &http.Transport{MaxIdleConnsPerHost: 32},
		messages5xx: map[string]int{}, statusesSeen5: map[int]int{}}
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err != nil {
		if !errors.Is(err, syscall.ECONNREFUSED) { // a refused request never reached a server
			c.noAnswer.Add(1)
		}
		return resp, err
	}
	if resp.Header.Get("Idempotent-Replayed") == "true" {
		c.replayed.Add(1)
	}
	if resp.StatusCode >= 500 {
		c.status5xx.Add(1)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var e struct {
			Error string `json:"error"`
		}
		json.Unmarshal(body, &e)
		msg := e.Error
		if msg == "" {
			msg = "(no JSON error message) " + string(body)
		}
		// Trial numbers and study names vary; the kind of message does not.
		if len(msg) > 160 {
			msg = msg[:160] + "…"
		}
		c.mu.Lock()
		c.messages5xx[msg]++
		c.statusesSeen5[resp.StatusCode]++
		c.mu.Unlock()
	}
	return resp, nil
}

// count5xx counts the 5xx answers whose message contains part.
func (c *countingTransport) count5xx(part string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for msg, k := range c.messages5xx {
		if strings.Contains(msg, part) {
			n += k
		}
	}
	return n
}

func (c *countingTransport) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	type kv struct {
		msg string
		n   int
	}
	var ms []kv
	for m, n := range c.messages5xx {
		ms = append(ms, kv{m, n})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].n > ms[j].n })
	var b strings.Builder
	fmt.Fprintf(&b, "5xx answers %d %v, requests without answer %d, asks replayed %d", c.status5xx.Load(), c.statusesSeen5, c.noAnswer.Load(), c.replayed.Load())
	for i, m := range ms {
		if i == 4 {
			fmt.Fprintf(&b, "\n\t… %d more kinds", len(ms)-i)
			break
		}
		fmt.Fprintf(&b, "\n\t%d× %s", m.n, m.msg)
	}
	return b.String()
}

// faultTraffic is a set of workers asking and telling on one study, and what
// they saw: which worker got each trial and which tells were acknowledged.
type faultTraffic struct {
	url, study string
	transport  *countingTransport
	retries    int

	mu        sync.Mutex
	handed    map[int64]string  // trial number → the worker that received it
	told      map[int64]float64 // acknowledged tells
	handedTwo []string          // trials handed out a second time

	asks, askErrs, tellErrs, completed atomic.Int64
	stop                               chan struct{}
	wg                                 sync.WaitGroup
}

func newFaultTraffic(url, study string, retries int) *faultTraffic {
	return &faultTraffic{url: url, study: study, transport: newCountingTransport(), retries: retries,
		handed: map[int64]string{}, told: map[int64]float64{}, stop: make(chan struct{})}
}

func (f *faultTraffic) client(worker string) *client.Client {
	return client.New(f.url, client.WithToken(token), client.WithWorker(worker),
		client.WithHTTPClient(&http.Client{Transport: f.transport}), client.WithRetries(f.retries, 50*time.Millisecond))
}

// start runs n workers until halt. An ask that fails after the client's
// retries is counted and asked again (with a new key: the trial, if the
// server created one, expires); a tell that fails after the client's retries
// is counted and its trial left to expire.
func (f *faultTraffic) start(ctx context.Context, n int) {
	for w := 0; w < n; w++ {
		f.wg.Add(1)
		go func(name string) {
			defer f.wg.Done()
			c := f.client(name)
			for {
				select {
				case <-f.stop:
					return
				default:
				}
				tr, err := c.Ask(ctx, f.study)
				if err != nil {
					f.askErrs.Add(1)
					time.Sleep(20 * time.Millisecond)
					continue
				}
				f.asks.Add(1)
				f.mu.Lock()
				if prev, dup := f.handed[tr.Number]; dup {
					f.handedTwo = append(f.handedTwo, fmt.Sprintf("trial %d handed to %s and %s", tr.Number, prev, name))
				}
				f.handed[tr.Number] = name
				f.mu.Unlock()
				v, err := evalBranin(tr)
				if err != nil {
					f.tellErrs.Add(1)
					continue
				}
				time.Sleep(2 * time.Millisecond) // "training"
				if err := c.Tell(ctx, f.study, tr.Number, v); err != nil {
					f.tellErrs.Add(1)
					continue
				}
				f.mu.Lock()
				f.told[tr.Number] = v
				f.mu.Unlock()
				f.completed.Add(1)
			}
		}(fmt.Sprintf("w%02d", w))
	}
}

func (f *faultTraffic) halt() {
	close(f.stop)
	f.wg.Wait()
}

// waitCompleted waits until n tells were acknowledged in all.
func (f *faultTraffic) waitCompleted(t *testing.T, ctx context.Context, n int64) {
	t.Helper()
	for f.completed.Load() < n {
		if ctx.Err() != nil {
			t.Fatalf("timed out at %d acknowledged tells, waiting for %d (%s)", f.completed.Load(), n, f.transport.summary())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// drainAndCheck lets every trial whose worker vanished expire, evaluates the
// requeued copies, and checks the study. It returns its figures as a line.
func (f *faultTraffic) drainAndCheck(t *testing.T, ctx context.Context) string {
	t.Helper()
	admin := client.New(f.url, client.WithToken(token), client.WithRetries(20, 50*time.Millisecond))
	finisher := client.New(f.url, client.WithToken(token), client.WithWorker("finisher"), client.WithRetries(20, 50*time.Millisecond))
	drained := 0
	for deadline := time.Now().Add(faultTrialTimeout + 30*time.Second); ; {
		open, err := admin.Trials(ctx, f.study, "pending", "running")
		if err != nil {
			t.Fatal(err)
		}
		if len(open) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d trials still pending or running %v after the traffic stopped", len(open), faultTrialTimeout+30*time.Second)
		}
		pending := false
		for _, tr := range open {
			pending = pending || tr.State == "pending"
		}
		if !pending { // running ones whose worker is gone: wait for expiry
			time.Sleep(200 * time.Millisecond)
			continue
		}
		tr, err := finisher.Ask(ctx, f.study)
		if err != nil {
			t.Fatal(err)
		}
		if tr.RequeuedFrom == nil {
			t.Errorf("the finisher got a fresh proposal %d while copies were queued", tr.Number)
		}
		v, err := evalBranin(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := finisher.Tell(ctx, f.study, tr.Number, v); err != nil {
			t.Fatal(err)
		}
		f.handed[tr.Number], f.told[tr.Number] = "finisher", v
		drained++
	}

	all, err := admin.Trials(ctx, f.study)
	if err != nil {
		t.Fatal(err)
	}
	byNumber := map[int64]client.Trial{}
	states := map[string]int{}
	copies := map[int64]int{} // trial → how often it was requeued
	for i, tr := range all {
		if tr.Number != int64(i) {
			t.Errorf("trial numbers are not dense: position %d holds %d", i, tr.Number)
		}
		byNumber[tr.Number] = tr
		states[tr.State]++
		if tr.RequeuedFrom != nil {
			copies[*tr.RequeuedFrom]++
		}
	}
	// lost: an acknowledged tell whose value is not stored.
	lost := 0
	for n, v := range f.told {
		tr, ok := byNumber[n]
		if !ok || tr.State != "complete" || tr.Value == nil || *tr.Value != v {
			lost++
			if lost <= 3 {
				t.Errorf("acknowledged tell of trial %d (%v) is not stored: %+v", n, v, tr)
			}
		}
	}
	wrongWorker := 0
	for n, who := range f.handed {
		if byNumber[n].Worker != who {
			wrongWorker++
			if wrongWorker <= 3 {
				t.Errorf("trial %d: stored worker %q, handed to %s", n, byNumber[n].Worker, who)
			}
		}
	}
	// duplicated: a trial requeued more than once, or a configuration
	// evaluated twice (a trial and a copy of it, at any depth, both complete).
	duplicated := 0
	for n, k := range copies {
		if k > 1 {
			duplicated++
			t.Errorf("trial %d was requeued %d times", n, k)
		}
	}
	completeInChain := map[int64]int{}
	for _, tr := range all {
		root := tr
		for root.RequeuedFrom != nil {
			root = byNumber[*root.RequeuedFrom]
		}
		if tr.State == "complete" {
			completeInChain[root.Number]++
		}
	}
	for root, k := range completeInChain {
		if k > 1 {
			duplicated++
			t.Errorf("the configuration of trial %d was evaluated %d times", root, k)
		}
	}
	for _, tr := range all {
		if tr.State == "expired" && copies[tr.Number] == 0 {
			// An expired trial whose configuration was settled by a late
			// tell of another link of its chain needs no copy; any other
			// expired trial lost its configuration.
			root := tr
			for root.RequeuedFrom != nil {
				root = byNumber[*root.RequeuedFrom]
			}
			if completeInChain[root.Number] == 0 {
				t.Errorf("expired trial %d was never requeued and its configuration never evaluated", tr.Number)
			}
		}
	}
	if states["pending"]+states["running"] != 0 {
		t.Errorf("unfinished trials left: %v", states)
	}
	f.mu.Lock()
	handedTwice := len(f.handedTwo)
	for i, s := range f.handedTwo {
		if i == 3 {
			break
		}
		t.Error(s)
	}
	f.mu.Unlock()
	return fmt.Sprintf("trials handed out %d (failed asks %d), tells acknowledged %d (failed tells %d), drained copies %d; stored %d %v; "+
		"handed out twice %d, duplicated %d, lost %d, wrong worker %d; %s",
		f.asks.Load(), f.askErrs.Load(), f.completed.Load(), f.tellErrs.Load(), drained, len(all), states,
		handedTwice, duplicated, lost, wrongWorker, f.transport.summary())
}

func createFaultStudy(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	admin := client.New(url, client.WithToken(token), client.WithRetries(20, 50*time.Millisecond))
	if _, err := admin.CreateStudy(ctx, client.StudySpec{Name: "f", Space: json.RawMessage(space2D),
		Optimizer: json.RawMessage(`{"strategy":"random","seed":31}`)}); err != nil {
		t.Fatal(err)
	}
}

// faultKillLoop kills `xbo serve --db db` with SIGKILL `kills` times under
// eight workers, restarting it each time, then drains and checks the study.
func faultKillLoop(t *testing.T, bin, dir, db string, kills int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	addr := freeAddr(t)
	serve := func() *exec.Cmd {
		return serveProcess(t, bin, dir, addr, "--db", db, "--trial-timeout", faultTrialTimeout.String())
	}
	srv := serve()
	defer func() { srv.Process.Kill(); srv.Wait() }()
	url := "http://" + addr
	createFaultStudy(t, ctx, url)
	// Forty retries with a doubling backoff capped at 5 s outlast a restart:
	// asks and tells cross it.
	traffic := newFaultTraffic(url, "f", 40)
	traffic.start(ctx, 8)
	var downtime time.Duration
	for k := 1; k <= kills; k++ {
		// Kill at a varying point: 30 to 60 acknowledged tells after the
		// previous restart.
		traffic.waitCompleted(t, ctx, traffic.completed.Load()+30+int64(rand.IntN(31)))
		if err := srv.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		srv.Wait()
		began := time.Now()
		srv = serve()
		downtime += time.Since(began)
	}
	traffic.waitCompleted(t, ctx, traffic.completed.Load()+30)
	traffic.halt()
	if n := traffic.tellErrs.Load(); n > 0 {
		t.Errorf("%d tells failed although the client retries them across a restart", n)
	}
	if n := traffic.askErrs.Load(); n > 0 {
		t.Errorf("%d asks failed although the client retries them across a restart", n)
	}
	t.Logf("%s: kills %d (restart to first answer %.2f s on average); %s", filepath.Base(t.Name()), kills,
		downtime.Seconds()/float64(kills), traffic.drainAndCheck(t, ctx))
}

// faultConnectionDrops runs 16 workers against `xbo serve` on PostgreSQL
// and, `drops` times, terminates every backend of the server's connections
// (pg_terminate_backend), then drains and checks the study.
func faultConnectionDrops(t *testing.T, bin string, drops int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	pg := storetest.NamedPostgres(t)
	dir, addr := t.TempDir(), freeAddr(t)
	srv := serveProcess(t, bin, dir, addr, "--db", pg.DSN, "--trial-timeout", faultTrialTimeout.String())
	defer func() { srv.Process.Kill(); srv.Wait() }()
	url := "http://" + addr
	createFaultStudy(t, ctx, url)
	// The client's default retries: 5, from 100 ms.
	traffic := newFaultTraffic(url, "f", 5)
	traffic.start(ctx, 16)
	terminated := 0
	for d := 1; d <= drops; d++ {
		traffic.waitCompleted(t, ctx, traffic.completed.Load()+40+int64(rand.IntN(41)))
		n := pg.Terminate(t)
		if n == 0 {
			t.Fatalf("drop %d: no connection of the server to terminate", d)
		}
		terminated += n
	}
	traffic.waitCompleted(t, ctx, traffic.completed.Load()+40)
	traffic.halt()
	if err := srv.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("xbo serve died during the connection drops: %v", err)
	}
	// A transaction that lost its connection before committing runs again
	// on a fresh one; one whose commit answer was lost is looked up
	// (txid_status) and runs again if it did not commit. The client retries
	// what still fails, asks with their idempotency key.
	if n := traffic.transport.count5xx("store: begin:"); n > 0 {
		t.Errorf("%d answers were 5xx because a transaction began on a dead connection", n)
	}
	if n := traffic.tellErrs.Load(); n > 0 {
		t.Errorf("%d tells failed despite the client's retries", n)
	}
	if n := traffic.askErrs.Load(); n > 0 {
		t.Errorf("%d asks failed despite the client's retries", n)
	}
	t.Logf("PostgresConnectionDrops: rounds %d, backends terminated %d, workers 16; %s", drops, terminated, traffic.drainAndCheck(t, ctx))
}

// faultDiskFull runs `xbo serve` on a SQLite file in a 32 MiB tmpfs, fills
// the file system under eight workers until the server answers errors, keeps
// it full for a while, frees the space and checks that the service recovers
// and lost nothing it acknowledged. It needs root (mount); without it the
// subtest is skipped and says so.
func faultDiskFull(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk")
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root): %v: %s", err, out)
	}
	// Cleanups run last first: the server is stopped before the unmount.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", disk).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", disk, err, out)
		}
	})
	addr := freeAddr(t)
	srv := serveProcess(t, bin, dir, addr, "--db", filepath.Join(disk, "xbo.db"), "--trial-timeout", faultTrialTimeout.String())
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	url := "http://" + addr
	createFaultStudy(t, ctx, url)
	// Two retries: a tell that meets the full disk fails and is counted.
	traffic := newFaultTraffic(url, "f", 2)
	traffic.start(ctx, 8)
	traffic.waitCompleted(t, ctx, 50)

	// Fill the disk, and keep topping it up (a checkpoint may truncate the
	// WAL and free pages) until the server has answered 30 errors.
	filler := filepath.Join(disk, "filler")
	fill := func() {
		f, err := os.OpenFile(filler, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
		defer f.Close()
		chunk := make([]byte, 4096)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				return
			}
		}
	}
	filledAt := traffic.completed.Load()
	full := time.Now()
	for traffic.transport.status5xx.Load() < 30 {
		if time.Since(full) > 2*time.Minute {
			t.Fatalf("the disk was full for 2 minutes and the server answered no errors (%d tells acknowledged meanwhile)", traffic.completed.Load()-filledAt)
		}
		fill()
		time.Sleep(50 * time.Millisecond)
	}
	errorsAfter := time.Since(full)
	// Reads still work on a full disk.
	reader := client.New(url, client.WithToken(token), client.WithRetries(0, 0))
	if _, err := reader.Trials(ctx, "f"); err != nil {
		t.Errorf("listing trials on a full disk: %v", err)
	}
	fullFor := 3 * time.Second
	time.Sleep(fullFor)
	fill()
	answeredWhileFull := traffic.transport.status5xx.Load()
	completedWhileFull := traffic.completed.Load() - filledAt

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	freedAt := traffic.completed.Load()
	traffic.waitCompleted(t, ctx, freedAt+1)
	recovery := time.Since(freed)
	traffic.waitCompleted(t, ctx, freedAt+100)
	traffic.halt()
	if err := srv.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("xbo serve died on the full disk: %v", err)
	}
	clear := traffic.transport.count5xx("disk is full")
	if clear == 0 {
		t.Errorf("no 5xx answer said the disk is full: %s", traffic.transport.summary())
	}
	t.Logf("DiskFullSQLite: 32 MiB tmpfs; first 30 errors %.2f s after filling, full %.1f s more, %d tells acknowledged while full, "+
		"%d 5xx by then (%d saying the disk is full, in the end); first acknowledged tell %.2f s after freeing; %s",
		errorsAfter.Seconds(), fullFor.Seconds(), completedWhileFull, answeredWhileFull, clear, recovery.Seconds(), traffic.drainAndCheck(t, ctx))
}
