package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strings"

	"xbo/client"
)

func init() {
	register(command{name: "study delete", summary: "delete a study and all its trials (needs --yes)",
		synopsis: "xbo study delete NAME --yes [--db xbo.db | --url URL [--token T]]",
		about: `Deletes the study and its trials, intermediate values included, for good.
Without --yes nothing is deleted: the command says what would be, and
exits with status 2 (it never asks, so it is safe in scripts).`,
		run: runStudyDelete})
}

func runStudyDelete(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("study delete", flag.ContinueOnError)
	yes := fs.Bool("yes", false, "confirm the deletion")
	open := serviceFlags(fs)
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if name == "" {
		return usagef("which study? xbo study delete NAME --yes")
	}
	svc, err := open(ctx, runService{existing: true})
	if err != nil {
		return err
	}
	defer svc.close()
	st, err := svc.c.Study(ctx, name)
	if client.IsStatus(err, http.StatusNotFound) {
		return fmt.Errorf("no study %q in %s", name, svc.where)
	}
	if err != nil {
		return err
	}
	n := 0
	for _, k := range st.Counts {
		n += k
	}
	trials := fmt.Sprintf("%d trials", n)
	if n == 1 {
		trials = "1 trial"
	}
	if !*yes {
		return usagef("deleting study %q (%s) would remove it and its %s for good; add --yes to confirm", name, svc.where, trials)
	}
	if err := svc.c.DeleteStudy(ctx, name); err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "deleted study %q and its %s\n", name, trials)
	return nil
}
