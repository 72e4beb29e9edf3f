//go:build !linux

package lowprio

const supported = false

func threadID() (int, bool) { return 0, false }

func lockAndLower(int) int { return 0 }
