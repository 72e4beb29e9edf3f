package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"xbo/store/storetest"
)

const typedSpace = `{"objective":"minimize","params":[
	{"name":"units","type":"categorical","choices":[16,32,64]},
	{"name":"flag","type":"categorical","choices":[true,false]},
	{"name":"opt","type":"categorical","choices":["sgd","adam"]},
	{"name":"x","type":"float","low":0,"high":1}]}`

// checkTyped fails unless params hold every parameter with its JSON type:
// units a number among the choices, flag a boolean, opt a string.
func checkTyped(t *testing.T, where string, params map[string]any) {
	t.Helper()
	units, ok := params["units"].(float64)
	if !ok || (units != 16 && units != 32 && units != 64) {
		t.Fatalf("%s: units %#v is not one of the numbers 16, 32, 64", where, params["units"])
	}
	if _, ok := params["flag"].(bool); !ok {
		t.Fatalf("%s: flag %#v is not a boolean", where, params["flag"])
	}
	if opt, ok := params["opt"].(string); !ok || (opt != "sgd" && opt != "adam") {
		t.Fatalf("%s: opt %#v", where, params["opt"])
	}
}

// Numeric and boolean choices keep their JSON types through the API: asks,
// enqueued trials (given typed or as text), listings, the best trial and
// the explanations' levels and points. Choices JSON cannot be are refused
// with the parameter's name.
func TestTypedCategoricalChoices(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		st, _ := storetest.Open(t, backend)
		e := newEnv(t, st, 0)
		for _, c := range []struct{ choices, want string }{
			{`[16, null]`, `parameter \"units\": choice #2: null is not a choice`},
			{`[16, {"a": 1}]`, `parameter \"units\": choice #2`},
			{`[[16]]`, `parameter \"units\": choice #1`},
			{`[16, 32, 16]`, `parameter \"units\": choice 16 appears twice`},
			{`[16, "16"]`, `parameter \"units\": choices 16 and \"16\" are both written \"16\"`},
		} {
			body := `{"name":"bad","space":{"params":[{"name":"units","type":"categorical","choices":` + c.choices + `}]}}`
			code, resp := raw(t, e, "POST", "/api/studies", body, true)
			if code != 400 || !strings.Contains(resp, c.want) {
				t.Fatalf("choices %s: %d %s, want 400 with %s", c.choices, code, resp, c.want)
			}
		}
		code, resp := raw(t, e, "POST", "/api/studies", `{"name":"s","space":`+typedSpace+`,"optimizer":{"initial_size":4,"seed":3}}`, true)
		if code != 201 {
			t.Fatalf("create: %d %s", code, resp)
		}
		decode := func(what, body string, v any) {
			t.Helper()
			if err := json.Unmarshal([]byte(body), v); err != nil {
				t.Fatalf("%s: %v in %s", what, err, body)
			}
		}
		type trial struct {
			Number int64          `json:"number"`
			Params map[string]any `json:"params"`
		}
		bestValue, bestParams := 0.0, map[string]any(nil)
		for i := range 8 {
			code, resp := raw(t, e, "POST", "/api/studies/s/ask", `{}`, true)
			if code != 200 {
				t.Fatalf("ask: %d %s", code, resp)
			}
			var tr trial
			decode("ask", resp, &tr)
			checkTyped(t, fmt.Sprintf("ask %d", i), tr.Params)
			// The objective reads the typed values as a Python worker would.
			v := tr.Params["units"].(float64) / 64
			if tr.Params["flag"].(bool) {
				v += 1
			}
			if bestParams == nil || v < bestValue {
				bestValue, bestParams = v, tr.Params
			}
			if code, resp := raw(t, e, "POST", fmt.Sprintf("/api/studies/s/trials/%d/tell", tr.Number), fmt.Sprintf(`{"value":%g}`, v), true); code != 200 {
				t.Fatalf("tell: %d %s", code, resp)
			}
		}
		// Enqueued with typed values, or with their text forms as older
		// clients sent them: both are stored and handed out typed.
		for _, body := range []string{`{"params":{"units":64,"flag":false,"opt":"adam","x":0.5}}`, `{"params":{"units":"32","flag":"true","opt":"sgd","x":0.5}}`} {
			code, resp := raw(t, e, "POST", "/api/studies/s/trials", body, true)
			if code != 201 {
				t.Fatalf("enqueue %s: %d %s", body, code, resp)
			}
			var tr trial
			decode("enqueue", resp, &tr)
			checkTyped(t, "enqueue "+body, tr.Params)
		}
		code, resp = raw(t, e, "POST", "/api/studies/s/ask", `{}`, true)
		var queued trial
		decode("ask queued", resp, &queued)
		if code != 200 || queued.Params["units"] != 64.0 || queued.Params["flag"] != false {
			t.Fatalf("queued trial handed out as %d %s", code, resp)
		}
		if code, resp := raw(t, e, "POST", "/api/studies/s/trials", `{"params":{"units":17,"flag":true,"opt":"sgd","x":0.5}}`, true); code != 400 || !strings.Contains(resp, `\"units\": 17 is not one of its choices [16,32,64]`) {
			t.Fatalf("enqueue 17: %d %s", code, resp)
		}
		_, resp = raw(t, e, "GET", "/api/studies/s/trials?limit=100", "", false)
		var page struct{ Trials []trial }
		decode("trials", resp, &page)
		if len(page.Trials) != 10 {
			t.Fatalf("%d trials listed", len(page.Trials))
		}
		for _, tr := range page.Trials {
			checkTyped(t, fmt.Sprintf("listed trial %d", tr.Number), tr.Params)
		}
		_, resp = raw(t, e, "GET", "/api/studies/s/best", "", false)
		var best trial
		decode("best", resp, &best)
		checkTyped(t, "best", best.Params)
		if fmt.Sprint(best.Params) != fmt.Sprint(bestParams) {
			t.Fatalf("best %v, want %v", best.Params, bestParams)
		}
		// Explanations: the PDP's levels and the explained point are typed.
		for param, want := range map[string]string{"units": `[16,32,64]`, "flag": `[true,false]`} {
			code, resp := raw(t, e, "GET", "/api/studies/s/explain/pdp?param="+param+"&samples=100", "", false)
			var pdp struct {
				Labels json.RawMessage `json:"labels"`
			}
			decode("pdp", resp, &pdp)
			if code != 200 || string(pdp.Labels) != want {
				t.Fatalf("pdp %s: %d labels %s, want %s", param, code, pdp.Labels, want)
			}
		}
		code, resp = raw(t, e, "GET", fmt.Sprintf("/api/studies/s/explain/shapley?trial=%d&background=50", best.Number), "", false)
		var sh struct {
			Point map[string]any `json:"point"`
		}
		decode("shapley", resp, &sh)
		if code != 200 {
			t.Fatalf("shapley: %d %s", code, resp)
		}
		checkTyped(t, "shapley point", sh.Point)
	})
}
