package helmrender

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"text/template"

	"github.com/hanzoai/deploy-web/internal/yamlbudget"
)

const (
	// maxSeqLen caps the items of until, untilStep and seq: a chart
	// counts replicas or ports with them.
	maxSeqLen = 100_000
	// maxRandom caps the length of a random string or byte slice.
	maxRandom = 1 << 16
	// maxIndent caps indent and nindent's spaces.
	maxIndent = 1 << 10
)

// clusterFuncs are the functions that would read the cluster or the
// network, with what they do here instead.
var clusterFuncs = map[string]string{
	"lookup":        "returns nothing here (deploy-web renders without reading the cluster, as `helm template` does), so the template takes its not-found branch",
	"getHostByName": `returns "" here (no DNS while rendering)`,
}

// randomFuncs draw random values or read the clock: every render differs.
var randomFuncs = []string{
	"randAlphaNum", "randAlpha", "randAscii", "randNumeric", "randBytes", "randInt", "uuidv4", "shuffle",
	"genPrivateKey", "genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey", "genSignedCert", "genSignedCertWithKey",
	"bcrypt", "htpasswd", "encryptAES", "now", "ago",
}

const randomWarning = "draws a random value or reads the clock, so every render differs and the plan's drift never settles: set the value in the values file (or keep a Secret made out of band) instead"

// warnedFunc says what to tell of a template that calls fn, ok false
// when nothing.
func warnedFunc(fn string) (string, bool) {
	if w, ok := clusterFuncs[fn]; ok {
		return w, true
	}
	if slices.Contains(randomFuncs, fn) {
		return randomWarning, true
	}
	return "", false
}

// mutatingFuncs change a value the templates share (.Values, a dict
// passed on): a random value drawn by a template whose objects are left
// out can reach another template's through them.
var mutatingFuncs = []string{"set", "unset", "merge", "mergeOverwrite", "mustMerge", "mustMergeOverwrite"}

// warnings are the warnings of the warned functions the render called,
// one per function and template, in a stable order; for templates applied
// says yes to, and for the others that changed a shared value (a template
// whose objects are all left out, such as a chart test, or that rendered
// none, and changed nothing shared, changes nothing applied).
func (e *engine) warnings(applied func(template string) bool) []string {
	var out []string
	for fn, tpls := range e.calls {
		for t := range tpls {
			if !applied(t) && !e.mutates[t] {
				continue
			}
			w, _ := warnedFunc(fn)
			out = append(out, fmt.Sprintf("chart %s: %s calls %s, which %s", e.chart, chartFile(t), fn, w))
		}
	}
	sort.Strings(out)
	return out
}

// drewRandom reports whether the render of template t (a full name)
// called a function of randomFuncs.
func (e *engine) drewRandom(t string) bool {
	for _, fn := range randomFuncs {
		if e.calls[fn][t] {
			return true
		}
	}
	return false
}

// bound replaces the functions that loop or grow with versions that
// refuse an argument over their bound before doing any work.
func (e *engine) bound(fm template.FuncMap) {
	until := fm["until"].(func(int) []int)
	untilStep := fm["untilStep"].(func(int, int, int) []int)
	seq := fm["seq"].(func(...int) string)
	indent := fm["indent"].(func(int, string) string)
	nindent := fm["nindent"].(func(int, string) string)
	fm["until"] = func(n int) ([]int, error) {
		if err := e.seqLen("until", seqCount(0, n, sign(n))); err != nil {
			return nil, err
		}
		return until(n), nil
	}
	fm["untilStep"] = func(start, stop, step int) ([]int, error) {
		if err := e.seqLen("untilStep", seqCount(start, stop, step)); err != nil {
			return nil, err
		}
		return untilStep(start, stop, step), nil
	}
	fm["seq"] = func(p ...int) (string, error) {
		var n float64
		switch len(p) {
		case 1:
			n = math.Abs(float64(p[0])-1) + 1
		case 2:
			n = math.Abs(float64(p[1])-float64(p[0])) + 1
		case 3:
			if p[1] != 0 {
				n = math.Abs(float64(p[2])-float64(p[0]))/math.Abs(float64(p[1])) + 1
			}
		}
		if err := e.seqLen("seq", n); err != nil {
			return "", err
		}
		return seq(p...), nil
	}
	fm["repeat"] = func(count int, s string) (string, error) {
		if count < 0 {
			return "", errors.New("repeat: negative count")
		}
		if float64(count)*float64(len(s)) > float64(e.lim.MaxOutputBytes) {
			return "", e.fail("", fmt.Sprintf("repeat makes %d copies of %d bytes, more than the %d bytes the templates may write", count, len(s), e.lim.MaxOutputBytes), "fix the template that repeats")
		}
		return strings.Repeat(s, count), nil
	}
	growIndent := func(name string, f func(int, string) string) func(int, string) (string, error) {
		return func(spaces int, s string) (string, error) {
			if spaces < 0 {
				return "", fmt.Errorf("%s: negative spaces", name)
			}
			if spaces > maxIndent {
				return "", e.fail("", fmt.Sprintf("%s by %d spaces, more than %d", name, spaces, maxIndent), "fix the template")
			}
			if float64(spaces)*float64(strings.Count(s, "\n")+1)+float64(len(s)) > float64(e.lim.MaxOutputBytes) {
				return "", e.fail("", fmt.Sprintf("%s makes more than the %d bytes the templates may write", name, e.lim.MaxOutputBytes), "fix the template")
			}
			return f(spaces, s), nil
		}
	}
	fm["indent"] = growIndent("indent", indent)
	fm["nindent"] = growIndent("nindent", nindent)
	for _, name := range []string{"randAlphaNum", "randAlpha", "randAscii", "randNumeric"} {
		f := fm[name].(func(int) string)
		fm[name] = func(n int) (string, error) {
			if n < 0 || n > maxRandom {
				return "", e.fail("", fmt.Sprintf("%s %d: the length must be 0 to %d", name, n, maxRandom), "fix the template")
			}
			return f(n), nil
		}
	}
	randBytes := fm["randBytes"].(func(int) (string, error))
	fm["randBytes"] = func(n int) (string, error) {
		if n < 0 || n > maxRandom {
			return "", e.fail("", fmt.Sprintf("randBytes %d: the length must be 0 to %d", n, maxRandom), "fix the template")
		}
		return randBytes(n)
	}
	// Decoders of text a template made: the YAML budget first.
	for _, name := range []string{"fromYaml", "fromYamlArray"} {
		f := fm[name]
		fv := reflect.ValueOf(f)
		fm[name] = func(s string) (any, error) {
			if _, err := yamlbudget.Check(name, []byte(s), yamlbudget.Budget{}); err != nil {
				return nil, e.fail("", name+" of a document that is "+budgetReason(err), "fix the template or the file it decodes")
			}
			return fv.Call([]reflect.Value{reflect.ValueOf(s)})[0].Interface(), nil
		}
	}
}

// seqCount is how many items untilStep(start, stop, step) has.
func seqCount(start, stop, step int) float64 {
	switch {
	case step == 0, stop < start && step > 0, stop > start && step < 0:
		return 0
	}
	return math.Ceil(math.Abs(float64(stop)-float64(start)) / math.Abs(float64(step)))
}

func sign(n int) int {
	if n < 0 {
		return -1
	}
	return 1
}

func (e *engine) seqLen(name string, n float64) error {
	if n > maxSeqLen {
		return e.fail("", fmt.Sprintf("%s asks for %.0f items, more than %d", name, n, maxSeqLen), "fix the template that counts")
	}
	return nil
}

// wrap makes fn (a template function) take a step before it runs and
// account for what it returns: strings count against Limits.MaxFuncBytes
// (all calls together) and Limits.MaxOutputBytes (one call); a map or a
// list may hold at most maxValueCost (a structure that shares itself, a
// dict of the same dict twice, nested, would print exponentially).
func (e *engine) wrap(name string, fn any) any {
	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func {
		return fn
	}
	_, warned := warnedFunc(name)
	mutating := slices.Contains(mutatingFuncs, name)
	return reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
		if err := e.step(); err != nil {
			panic(err)
		}
		if mutating {
			e.mutates[e.current] = true
		}
		if warned {
			if e.calls[name] == nil {
				e.calls[name] = map[string]bool{}
			}
			e.calls[name][e.current] = true
		}
		var out []reflect.Value
		if t.IsVariadic() {
			out = v.CallSlice(args)
		} else {
			out = v.Call(args)
		}
		for _, o := range out {
			if err := e.account(name, o); err != nil {
				panic(err)
			}
		}
		return out
	}).Interface()
}

// maxValueCost caps what one function result may hold: a node counts
// 16, a string its bytes.
func (e *engine) maxValueCost() int64 { return e.lim.MaxOutputBytes }

func (e *engine) account(name string, o reflect.Value) error {
	if e.stop != nil {
		return e.stop
	}
	for o.Kind() == reflect.Interface && !o.IsNil() {
		o = o.Elem()
	}
	switch o.Kind() {
	case reflect.String:
		return e.addFuncBytes(name, int64(o.Len()))
	case reflect.Slice:
		if o.Type().Elem().Kind() == reflect.Uint8 {
			return e.addFuncBytes(name, int64(o.Len()))
		}
		fallthrough
	case reflect.Map, reflect.Array:
		budget := e.maxValueCost()
		if !valueCost(o, &budget, 0) {
			return e.fail("", fmt.Sprintf("%s returns a value of more than %d bytes or nodes (or one that holds itself)", name, e.maxValueCost()), "fix the template that builds it")
		}
	}
	return nil
}

func (e *engine) addFuncBytes(name string, n int64) error {
	if n > e.lim.MaxOutputBytes {
		return e.fail("", fmt.Sprintf("%s returns %d bytes, more than the %d bytes the templates may write", name, n, e.lim.MaxOutputBytes), "fix the template")
	}
	e.funcBytes += n
	if e.funcBytes > e.lim.MaxFuncBytes {
		return e.fail("", fmt.Sprintf("the template functions return more than %d bytes together (%s last)", e.lim.MaxFuncBytes, name), "fix the template that grows a value in a loop")
	}
	return nil
}

// maxValueDepth caps the nesting valueCost walks (a structure that holds
// itself is deeper than anything real).
const maxValueDepth = 1000

// valueCost subtracts the cost of v from budget; false once it is
// spent or v nests deeper than maxValueDepth.
func valueCost(v reflect.Value, budget *int64, depth int) bool {
	if depth > maxValueDepth {
		return false
	}
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return true
		}
		v = v.Elem()
	}
	*budget -= 16
	if *budget < 0 {
		return false
	}
	switch v.Kind() {
	case reflect.String:
		*budget -= int64(v.Len())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			*budget -= int64(v.Len())
			break
		}
		for i := 0; i < v.Len(); i++ {
			if !valueCost(v.Index(i), budget, depth+1) {
				return false
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if !valueCost(it.Value(), budget, depth+1) {
				return false
			}
		}
	}
	return *budget >= 0
}
