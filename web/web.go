// Package web embeds the xbo dashboard that `xbo serve` shows at /.
//
// The sources are in this directory (src/, bundled by build.mjs with esbuild;
// the charting library is Apache ECharts, pinned in package-lock.json). The
// bundle is built into dist/ by
//
//	npm ci --prefix web && npm run --prefix web build
//
// and is not committed: only dist/.gitkeep is, so the module compiles before
// the first build, and Handler then answers 503 naming the build command.
// The dashboard reads everything through the JSON API (docs/api.md): the
// trials, their changes (GET …/events?since=v, polled) and the explanations
// (GET …/explain/{pdp,regional,importance,shapley}: Moosbauer et al. 2021;
// Hutter, Hoos and Leyton-Brown 2014; Croppi 2021).
package web

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed all:dist
var dist embed.FS

// Assets returns the built bundle (index.html, app.js, app.css). It fails
// when the bundle was not built.
func Assets() (fs.FS, error) {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		return nil, fmt.Errorf("web: assets: %w", err)
	}
	if _, err := fs.Stat(sub, "index.html"); err != nil {
		return nil, fmt.Errorf("web: dashboard not built (run: npm ci --prefix web && npm run --prefix web build): %w", err)
	}
	return sub, nil
}

// Handler serves the dashboard: index.html at / and the bundle's files by
// name. Only GET and HEAD are answered; paths under /api/ are not its own.
func Handler() http.Handler {
	assets, err := Assets()
	if err != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		})
	}
	files := http.FileServerFS(assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/api/") {
			http.NotFound(w, r)
			return
		}
		// The bundle is rebuilt with the binary, so clients revalidate.
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}
