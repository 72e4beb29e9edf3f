package main

import (
	"context"
	"flag"
	"fmt"
	"runtime/debug"
)

// Version is the release of xbo; builds from a checkout add the commit
// (from the Go toolchain's VCS stamp).
const Version = "0.3.0-dev"

func init() {
	register(command{name: "version", summary: "print xbo's version, commit and Go version (also xbo --version)", run: runVersion})
}

func runVersion(_ context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, versionLine())
	return nil
}

// versionLine is "xbo <version> (commit <rev>[, modified]) <go version>".
func versionLine() string {
	commit, modified, goVersion := "unknown", false, "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if modified {
		commit += ", modified"
	}
	return fmt.Sprintf("xbo %s (commit %s) %s", Version, commit, goVersion)
}
