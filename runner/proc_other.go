//go:build !unix

package runner

import (
	"os/exec"
	"syscall"
)

// ownGroup does nothing where there are no process groups.
func ownGroup(cmd *exec.Cmd) {}

// signalGroup stops the command: without process groups or SIGTERM, by
// killing its process.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

// alive cannot tell on this system; a trial of another xbo run is then
// never taken for abandoned.
func alive(pid int) bool { return true }
