package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"xbo/store"
)

// metrics are the server's Prometheus metrics, in a registry of its own (so
// two servers in one process, as in tests, do not collide), served at
// GET /metrics in the text exposition format.
type metrics struct {
	registry *prometheus.Registry
	// latency of every API request by route pattern and status class
	// (ask, tell and explain latencies are its "route" label).
	latency *prometheus.HistogramVec
	// storeErrors counts requests that failed with a server-side error.
	storeErrors prometheus.Counter
	// unavailable counts requests refused because the store could not be
	// reached: an outage to alert on by its own rate, not a fault of xbo.
	unavailable prometheus.Counter
	// replays counts asks answered with the trial of an earlier ask with
	// the same idempotency key: answers that clients lost.
	replays prometheus.Counter
	// fallbacks counts proposals that are uniform random configurations
	// standing in for a model-based one (acquisition "random-fallback"):
	// the surrogate could not be fitted or a step failed, or the
	// acquisition's best candidate repeated a trial with no other worth
	// proposing (package opt, duplicate.go). A rate that grows with a
	// study's trials means its budget is going to random search.
	fallbacks prometheus.Counter
}

// metricsScrapeTimeout bounds the store query a scrape makes.
const metricsScrapeTimeout = 5 * time.Second

func newMetrics(s *Server) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "xbo_http_request_duration_seconds",
			Help:    "Latency of API requests by route pattern, method and status class.",
			Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "code"}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "xbo_request_errors_total",
			Help: "API requests that failed with a server-side (5xx) error, store errors included.",
		}),
		unavailable: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "xbo_store_unavailable_total",
			Help: "API requests answered 503 because the store could not be reached or stayed locked (not counted in xbo_request_errors_total).",
		}),
		replays: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "xbo_ask_replays_total",
			Help: "Asks answered with the trial an earlier ask with the same Idempotency-Key received (its answer was lost).",
		}),
		fallbacks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "xbo_random_fallbacks_total",
			Help: "Trials proposed as a random configuration in place of a model-based proposal (acquisition random-fallback; the trial's meta.note says why).",
		}),
	}
	m.registry.MustRegister(m.latency, m.storeErrors, m.unavailable, m.replays, m.fallbacks,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "xbo_explain_computations",
			Help: "Explanation computations running or waiting for a slot in this process.",
		}, func() float64 { return float64(len(s.engine.InFlight())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "xbo_explain_waiting",
			Help: "Explanation computations waiting for a slot (the engine's queue depth).",
		}, func() float64 {
			n := 0
			for _, st := range s.engine.InFlight() {
				if st.Waiting {
					n++
				}
			}
			return float64(n)
		}),
		&trialsCollector{s: s, desc: prometheus.NewDesc("xbo_trials", "Trials of every study by state (read from the store at scrape time).", []string{"state"}, nil)},
	)
	return m
}

// observe records one request; outage says it was refused because the
// store was unavailable.
func (m *metrics) observe(route string, status int, d time.Duration, outage bool) {
	m.latency.WithLabelValues(route, strconv.Itoa(status/100)+"xx").Observe(d.Seconds())
	switch {
	case outage:
		m.unavailable.Inc()
	case status >= 500:
		m.storeErrors.Inc()
	}
}

func (m *metrics) handler() http.Handler {
	// A store outage fails the trial counts only: the other metrics (the
	// outage's own counter among them) are served all the same.
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Timeout: metricsScrapeTimeout, ErrorHandling: promhttp.ContinueOnError})
}

// trialsCollector sums the trial counts of every study by state.
type trialsCollector struct {
	s    *Server
	desc *prometheus.Desc
}

func (c *trialsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *trialsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), metricsScrapeTimeout)
	defer cancel()
	studies, err := c.s.st.Studies(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	totals := map[store.State]int{}
	for _, st := range studies {
		for state, n := range st.Counts {
			totals[state] += n
		}
	}
	for _, state := range store.States {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(totals[state]), string(state))
	}
}
