package client

import (
	"errors"
	"strings"
)

// Worker is the name this client gives itself in asks ("" when none was
// set with WithWorker, or c is nil).
func (c *Client) Worker() string {
	if c == nil {
		return ""
	}
	return c.worker
}

// AsWorker returns a copy of c that asks under another worker name and
// shares everything else (server, token, HTTP client, retries): a process
// that runs several evaluations at once names each slot, so trial listings
// and the dashboard's timeline tell them apart.
func (c *Client) AsWorker(id string) (*Client, error) {
	if c == nil {
		return nil, errors.New("client: AsWorker of a nil client")
	}
	if strings.TrimSpace(id) == "" {
		return nil, errors.New("client: empty worker name")
	}
	cp := *c
	cp.worker = id
	return &cp, nil
}
