//go:build unix

package runner

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the command in a process group of its own: a terminal's
// Ctrl-C then reaches xbo run alone, which stops the command its own way,
// and signals reach everything the command started (a shell's children).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the command's process group.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}

// alive reports whether a process of this machine still exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
