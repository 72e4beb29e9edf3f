package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// defaultBodyTimeout is how long a request body may take to arrive when
// Config.BodyTimeout is not set: a full 1 MiB body at 35 KB/s.
const defaultBodyTimeout = 30 * time.Second

// readBody reads the whole request body (already bounded by
// http.MaxBytesReader) under a read deadline, so that a client trickling
// its body a byte at a time cannot hold a connection and a goroutine
// indefinitely, then hands the handler the bytes. The deadline is lifted
// once the body is in: it must not reach the rest of the request, since a
// read deadline left on the connection ends the context of long handlers
// (event streams, explanations) when it passes. http.Server's ReadTimeout
// would do exactly that, which is why the limit is set here.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) error {
	rc := http.NewResponseController(w)
	// A handler called in process (client.WithHandler) has no connection
	// and no deadline to set; its body is already in memory.
	deadline := rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)) == nil
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// The deadline stays: the server would otherwise read the rest
		// of the body (to keep the connection) before answering. The
		// connection is closed after the answer instead.
		w.Header().Set("Connection", "close")
	} else if deadline {
		err = rc.SetReadDeadline(time.Time{})
	}
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case err == nil:
	case errors.As(err, &mbe):
		return err
	case errors.As(err, &ne) && ne.Timeout():
		return &httpError{http.StatusRequestTimeout, fmt.Errorf("the request body did not arrive within %v", s.cfg.BodyTimeout)}
	default:
		return badRequest("reading request body: %v", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return nil
}
