package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
)

// request holds every field any request may carry; a pointer is nil when the field is
// absent. Unknown fields are ignored, as the protocol asks.
type request struct {
	Type          string          `json:"type"`
	Alg           string          `json:"alg"`
	Seed          *string         `json:"seed"`
	Secret        *string         `json:"secret"`
	Public        *string         `json:"public"`
	Random        *string         `json:"random"`
	Key           *string         `json:"key"`
	Ciphertext    *string         `json:"ciphertext"`
	Message       *string         `json:"message"`
	Context       *string         `json:"context"`
	Deterministic *bool           `json:"deterministic"`
	Signature     *string         `json:"signature"`
	Peer          *string         `json:"peer"`
	Row           json.RawMessage `json:"row"`
	Operation     *string         `json:"operation"`
	Seconds       *float64        `json:"seconds"`
}

// handle is a secret key the controller refers to by name.
type handle struct {
	alg *algorithm
	key secretKey
}

type worker struct {
	algs    map[string]*algorithm
	order   []string
	handles map[string]handle
	next    int
	rows    map[string]*row
}

func newWorker() *worker {
	w := &worker{algs: map[string]*algorithm{}, handles: map[string]handle{}, rows: map[string]*row{}}
	for _, a := range algorithms() {
		w.algs[a.name] = a
		w.order = append(w.order, a.name)
	}
	return w
}

// hello is the first line: versions, offers, features, code paths, and which library
// serves each algorithm.
func (w *worker) hello() map[string]any {
	offers := map[string][]string{}
	features := map[string][]string{}
	codePaths := map[string]string{}
	libraryOf := map[string]string{}
	for _, name := range w.order {
		a := w.algs[name]
		offers[name] = operationsOf[a.kind]
		features[name] = append([]string{}, a.features...)
		codePaths[name] = a.codePath
		libraryOf[name] = a.library
	}
	return map[string]any{
		"type": "hello", "protocol": protocolVersion, "implementation": "go",
		"runtime":   fmt.Sprintf("%s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH),
		"libraries": libraryVersions(libraryOf),
		"offers":    offers, "features": features, "code_paths": codePaths, "library_of": libraryOf,
		"pid": os.Getpid(),
	}
}

// libraryVersions reads every version from the binary's own build information (go.mod as
// resolved at build time, replacements included). Each library named in libraryOf is a key:
// a standard-library package (no dot in its first path element) has the toolchain's version,
// a module its resolved version. Every other module linked in is listed too, and the build
// settings that change the code generated.
func libraryVersions(libraryOf map[string]string) map[string]string {
	versions := map[string]string{}
	info, ok := debug.ReadBuildInfo()
	goVersion := runtime.Version()
	if ok {
		goVersion = info.GoVersion
		for _, dep := range info.Deps {
			module := dep
			if dep.Replace != nil {
				module = dep.Replace
			}
			version := module.Version
			if version == "" {
				version = "(devel) " + module.Path
			}
			versions[dep.Path] = version
		}
		var settings []string
		for _, s := range info.Settings {
			switch s.Key {
			case "GOAMD64", "GOARM64", "CGO_ENABLED", "-tags", "GOEXPERIMENT", "GOFIPS140", "DefaultGODEBUG":
				settings = append(settings, s.Key+"="+s.Value)
			}
		}
		sort.Strings(settings)
		if len(settings) > 0 {
			versions["go build settings"] = strings.Join(settings, " ")
		}
	}
	for _, library := range libraryOf {
		if first, _, _ := strings.Cut(library, "/"); !strings.Contains(first, ".") {
			versions[library] = goVersion
		} else if _, known := versions[library]; !known {
			versions[library] = "unknown (not in the build information)"
		}
	}
	return versions
}

// handleLine answers one request line. A panic anywhere in a library becomes an error
// reply: a malformed request never ends the worker.
func (w *worker) handleLine(line []byte) (reply any, quit bool) {
	defer func() {
		if r := recover(); r != nil {
			reply, quit = errorReply(fmt.Sprintf("internal error: %v", r)), false
		}
	}()
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return errorReply("empty request line"), false
	}
	if line[0] != '{' {
		return errorReply("a request must be a JSON object"), false
	}
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return errorReply("malformed request: " + err.Error()), false
	}
	if req.Type == "quit" {
		return nil, true
	}
	result, err := w.dispatch(&req)
	var problem *notOfferedError
	switch {
	case errors.As(err, &problem):
		return notOffered(problem.reason), false
	case err != nil:
		return errorReply(err.Error()), false
	}
	return result, false
}

func (w *worker) dispatch(req *request) (map[string]any, error) {
	switch req.Type {
	case "keygen", "import", "encaps", "decaps", "sign", "verify", "derive", "prepare":
	case "run":
		return w.run(req)
	case "":
		return nil, errors.New(`request has no "type"`)
	default:
		return nil, fmt.Errorf("unknown request type %s", quoted(req.Type))
	}
	a, err := w.algorithm(req.Alg)
	if err != nil {
		return nil, err
	}
	switch req.Type {
	case "keygen":
		return w.keygen(a, req)
	case "import":
		return w.importKey(a, req)
	case "encaps":
		return w.encaps(a, req)
	case "decaps":
		return w.decaps(a, req)
	case "sign":
		return w.sign(a, req)
	case "verify":
		return w.verify(a, req)
	case "derive":
		return w.derive(a, req)
	default:
		return w.prepare(a, req)
	}
}

func (w *worker) algorithm(name string) (*algorithm, error) {
	if name == "" {
		return nil, errors.New(`request has no "alg"`)
	}
	a, ok := w.algs[name]
	if !ok {
		return nil, notOfferedf("the go implementation offers no algorithm %s", quoted(name))
	}
	return a, nil
}

// needKind refuses a request made for another kind of algorithm.
func needKind(a *algorithm, k kind, request string) error {
	if a.kind != k {
		return fmt.Errorf("%s is a %s algorithm; %s needs a %s", a.name, a.kind, request, k)
	}
	return nil
}

// field decodes a required hex field.
func field(name string, value *string) ([]byte, error) {
	if value == nil {
		return nil, fmt.Errorf("request has no %q", name)
	}
	return decodeHex(name, *value)
}

// optionalField decodes an optional hex field; nil when absent.
func optionalField(name string, value *string) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	return decodeHex(name, *value)
}

func decodeHex(name, value string) ([]byte, error) {
	b, err := hex.DecodeString(value)
	if err != nil {
		return nil, fmt.Errorf("field %q is not hex (%d characters)", name, len(value))
	}
	return b, nil
}

func (w *worker) remember(a *algorithm, key secretKey) string {
	w.next++
	name := "k" + strconv.Itoa(w.next)
	w.handles[name] = handle{alg: a, key: key}
	return name
}

func (w *worker) secret(a *algorithm, req *request) (secretKey, error) {
	if req.Key == nil {
		return nil, errors.New(`request has no "key"`)
	}
	h, ok := w.handles[*req.Key]
	if !ok {
		return nil, fmt.Errorf("no key with handle %s", quoted(*req.Key))
	}
	if h.alg != a {
		return nil, fmt.Errorf("key %s is an %s key, not %s", quoted(*req.Key), h.alg.name, a.name)
	}
	return h.key, nil
}

// keyed reads what a request on a held key needs, refusing in this order: an algorithm of
// another kind, a missing or wrong key handle, then a missing or non-hex input field.
func (w *worker) keyed(a *algorithm, req *request, k kind, name string, value *string) (secretKey, []byte, error) {
	if err := needKind(a, k, req.Type); err != nil {
		return nil, nil, err
	}
	key, err := w.secret(a, req)
	if err != nil {
		return nil, nil, err
	}
	input, err := field(name, value)
	if err != nil {
		return nil, nil, err
	}
	return key, input, nil
}

func keyReply(name string, public []byte) map[string]any {
	return map[string]any{"type": "key", "key": name, "public": hex.EncodeToString(public)}
}

func (w *worker) keygen(a *algorithm, req *request) (map[string]any, error) {
	seed, err := optionalField("seed", req.Seed)
	if err != nil {
		return nil, err
	}
	if seed != nil && !a.has("seeded_keygen") {
		return nil, notOfferedf("%s in %s has no seeded key generation", a.name, a.library)
	}
	key, public, err := a.keygen(seed)
	if err != nil {
		return nil, err
	}
	return keyReply(w.remember(a, key), public), nil
}

func (w *worker) importKey(a *algorithm, req *request) (map[string]any, error) {
	secret, err := field("secret", req.Secret)
	if err != nil {
		return nil, err
	}
	key, public, err := a.importSecret(secret)
	if err != nil {
		return nil, err
	}
	return keyReply(w.remember(a, key), public), nil
}

func (w *worker) encaps(a *algorithm, req *request) (map[string]any, error) {
	if err := needKind(a, kindKEM, "encaps"); err != nil {
		return nil, err
	}
	public, err := field("public", req.Public)
	if err != nil {
		return nil, err
	}
	random, err := optionalField("random", req.Random)
	if err != nil {
		return nil, err
	}
	if random != nil && !a.has("derandomized_encaps") {
		return nil, notOfferedf("%s in %s has no derandomized encapsulation", a.name, a.library)
	}
	ct, shared, err := a.encaps(public, random)
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": "encapsulated", "ciphertext": hex.EncodeToString(ct),
		"shared_secret": hex.EncodeToString(shared)}, nil
}

func (w *worker) decaps(a *algorithm, req *request) (map[string]any, error) {
	key, ct, err := w.keyed(a, req, kindKEM, "ciphertext", req.Ciphertext)
	if err != nil {
		return nil, err
	}
	shared, err := a.decaps(key, ct)
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": "decapsulated", "shared_secret": hex.EncodeToString(shared)}, nil
}

func (w *worker) sign(a *algorithm, req *request) (map[string]any, error) {
	key, message, err := w.keyed(a, req, kindSignature, "message", req.Message)
	if err != nil {
		return nil, err
	}
	context, err := optionalField("context", req.Context)
	if err != nil {
		return nil, err
	}
	deterministic := req.Deterministic != nil && *req.Deterministic
	if deterministic && a.signing != "deterministic" && !a.has("deterministic_sign") {
		return nil, notOfferedf("%s in %s has no deterministic signing", a.name, a.library)
	}
	sig, err := a.sign(key, message, context, deterministic)
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": "signed", "signature": hex.EncodeToString(sig)}, nil
}

func (w *worker) verify(a *algorithm, req *request) (map[string]any, error) {
	if err := needKind(a, kindSignature, "verify"); err != nil {
		return nil, err
	}
	public, err := field("public", req.Public)
	if err != nil {
		return nil, err
	}
	message, err := field("message", req.Message)
	if err != nil {
		return nil, err
	}
	context, err := optionalField("context", req.Context)
	if err != nil {
		return nil, err
	}
	// A signature that is not even hex is a malformed signature: it verifies false.
	if req.Signature == nil {
		return nil, errors.New(`request has no "signature"`)
	}
	signature, err := hex.DecodeString(*req.Signature)
	valid := false
	if err == nil {
		valid, err = a.verify(public, message, context, signature)
		if err != nil {
			return nil, err
		}
	}
	return map[string]any{"type": "verified", "valid": valid}, nil
}

func (w *worker) derive(a *algorithm, req *request) (map[string]any, error) {
	key, peer, err := w.keyed(a, req, kindAgreement, "peer", req.Peer)
	if err != nil {
		return nil, err
	}
	shared, err := a.derive(key, peer)
	if err != nil {
		return nil, fmt.Errorf("%s derive refused the peer key: %v", a.name, err)
	}
	return map[string]any{"type": "derived", "shared_secret": hex.EncodeToString(shared)}, nil
}

// quoted puts a name from a request in quotes for a message; the reply's JSON escapes it.
func quoted(s string) string { return `"` + s + `"` }
