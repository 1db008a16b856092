package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/sqlite"
)

const sealCanary = "CANARY-cli-5d1e"

// runSealedJob runs a job with a Basic password through "jobclock run
// -db" in dir and returns the database path.
func runSealedJob(t *testing.T, dir string, args ...string) (db string, stderr string) {
	t.Helper()
	db = filepath.Join(dir, "jobs.db")
	job := writeRunFile(t, dir, "basic.json", `{"action": {"type": "Https",
		"request": {"uri": "https://127.0.0.1:1/", "method": "GET",
			"authentication": {"type": "Basic", "username": "u", "password": "`+sealCanary+`"}},
		"retryPolicy": {"retryType": "None"}}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	if code := runScheduler(ctx, nil, append(append([]string{"-db", db, "-history=false"}, args...), job), &out, &errb); code != 0 {
		t.Fatalf("run -db = %d, stderr:\n%s", code, errb.String())
	}
	return db, errb.String()
}

// storedPassword reads the job's stored password from the database.
func storedPassword(t *testing.T, db string) string {
	t.Helper()
	st, err := sqlite.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.GetJob(context.Background(), "default", "basic")
	if err != nil {
		t.Fatal(err)
	}
	return r.Job.Action.Request.Authentication.Password
}

// TestRunCreatesKeyFile: run -db creates DB.key (mode 0600) on first use,
// seals the password with it, and uses the same key the next time.
func TestRunCreatesKeyFile(t *testing.T) {
	dir := t.TempDir()
	db, stderr := runSealedJob(t, dir)
	fi, err := os.Stat(db + ".key")
	if err != nil {
		t.Fatalf("no key file next to the database: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %o, want 600", fi.Mode().Perm())
	}
	if !strings.Contains(stderr, "created the secrets key file") {
		t.Errorf("run did not say it created the key file; stderr:\n%s", stderr)
	}
	keys, err := secrets.ReadKeyFile(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	pw := storedPassword(t, db)
	if id, ok := secrets.KeyID(pw); !ok || id != keys[0].ID() {
		t.Errorf("stored password %q is not sealed with the key file's key %s", pw, keys[0].ID())
	}
	if _, stderr := runSealedJob(t, dir); strings.Contains(stderr, "created") {
		t.Errorf("second run created a key again; stderr:\n%s", stderr)
	}
	after, _ := secrets.ReadKeyFile(db + ".key")
	if len(after) != 1 || after[0].ID() != keys[0].ID() {
		t.Error("the key file changed on the second run")
	}
}

// TestRunKeyFromEnvironment: JOBCLOCK_SECRETS_KEY takes the place of the
// key file next to the database, and a bad one is an error naming it.
func TestRunKeyFromEnvironment(t *testing.T) {
	k, text, err := secrets.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(keyEnv, text)
	dir := t.TempDir()
	db, _ := runSealedJob(t, dir)
	if _, err := os.Stat(db + ".key"); err == nil {
		t.Error("run created DB.key although the key came from the environment")
	}
	if id, _ := secrets.KeyID(storedPassword(t, db)); id != k.ID() {
		t.Errorf("password sealed with key %s, want the environment's %s", id, k.ID())
	}
	t.Setenv(keyEnv, "not-a-key")
	var out, errb bytes.Buffer
	if code := runScheduler(context.Background(), nil, []string{"-db", db, "x.json"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), keyEnv) {
		t.Errorf("run with a bad %s = %d, stderr %q; want 1 naming it", keyEnv, code, errb.String())
	}
	if strings.Contains(errb.String(), "not-a-key") {
		t.Errorf("the error repeats the key text: %q", errb.String())
	}
}

// TestResealCommand rotates the key of a database: keygen writes a new
// key, reseal refuses to go on without the old key, seals the stored
// password with the new key using the old one to open, and a second
// reseal rewrites nothing.
func TestResealCommand(t *testing.T) {
	dir := t.TempDir()
	db, _ := runSealedJob(t, dir)
	newKey := filepath.Join(dir, "new.key")
	var out, errb bytes.Buffer
	if code := run([]string{"keygen", newKey}, nil, &out, &errb); code != 0 {
		t.Fatalf("keygen = %d: %s", code, errb.String())
	}
	if fi, err := os.Stat(newKey); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("keygen wrote %v, %v; want a 0600 file", fi, err)
	}
	errb.Reset()
	if code := run([]string{"keygen", newKey}, nil, &out, &errb); code != 1 {
		t.Errorf("keygen over an existing file = %d, want 1", code)
	}
	if got, want := errb.String(), "jobclock keygen: "+newKey+" already exists; a new key is written only where no file is (give another name)\n"; got != want {
		t.Errorf("keygen over an existing file says %q, want %q", got, want)
	}
	keys, _ := secrets.ReadKeyFile(newKey)

	// Without the old key the stored password does not open.
	out.Reset()
	errb.Reset()
	if code := run([]string{"reseal", "-db", db, "-key-file", newKey}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "action.request.authentication.password") {
		t.Errorf("reseal without the old key = %d, stderr %q; want 1 naming the field", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	code := run([]string{"reseal", "-db", db, "-key-file", newKey, "-old-key-file", db + ".key"}, nil, &out, &errb)
	if code != 0 || !regexp.MustCompile(`^resealed 1 jobs with key `+keys[0].ID()+`\n$`).MatchString(out.String()) {
		t.Fatalf("reseal = %d, stdout %q, stderr %q; want 1 job resealed", code, out.String(), errb.String())
	}
	if id, _ := secrets.KeyID(storedPassword(t, db)); id != keys[0].ID() {
		t.Errorf("after reseal the password is sealed with %s, want %s", id, keys[0].ID())
	}
	out.Reset()
	if code := run([]string{"reseal", "-db", db, "-key-file", newKey, "-old-key-file", db + ".key"}, nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "resealed 0 jobs") {
		t.Errorf("second reseal = %d, %q; want 0 jobs", code, out.String())
	}
	for _, args := range [][]string{{"reseal"}, {"reseal", "-db", db, "-postgres", "x"}, {"reseal", "-db", db, "extra"}, {"keygen"}} {
		if code := run(args, nil, &out, &errb); code != 2 {
			t.Errorf("%v = %d, want 2", args, code)
		}
	}
	if code := run([]string{"reseal", "-db", filepath.Join(dir, "missing.db")}, nil, &out, &errb); code != 1 {
		t.Errorf("reseal of a missing database = %d, want 1", code)
	}
}

// TestResealCommandPostgres reseals a PostgreSQL schema: a job put with
// the old key (from JOBCLOCK_SECRETS_KEY) is sealed with the new one
// afterwards, and its ETag stays.
func TestResealCommandPostgres(t *testing.T) {
	dsn := os.Getenv("JOBCLOCK_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("JOBCLOCK_POSTGRES_DSN is not set")
		}
		t.Skip("JOBCLOCK_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("reseal_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	st, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	})
	dir := t.TempDir()
	oldFile, newFile := filepath.Join(dir, "old.key"), filepath.Join(dir, "new.key")
	oldKey, err := secrets.WriteKeyFile(oldFile)
	if err != nil {
		t.Fatal(err)
	}
	newKey, err := secrets.WriteKeyFile(newFile)
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := secrets.NewKeyring(oldKey)
	s, err := scheduler.New(st, &scheduler.Config{Secrets: ring, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	def, err := scheduler.ParseJob([]byte(`{"state": "Disabled", "action": {"type": "Https", "request": {"uri": "https://example.com/", "method": "GET",
		"authentication": {"type": "Basic", "username": "u", "password": "`+sealCanary+`"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	put, err := s.PutJob(ctx, "c", "j", def, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Without the old key, reseal, run and serve refuse the database, naming
	// the key it needs and -key-file, and change nothing.
	plain := writeRunFile(t, dir, "plain.json", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "GET"}, "retryPolicy": {"retryType": "None"}}}`)
	t.Setenv(keyEnv, "")
	for _, args := range [][]string{
		{"reseal", "-postgres", dsn, "-schema", schema, "-key-file", newFile},
		{"run", "-postgres", dsn, "-schema", schema, "-history=false", "-key-file", newFile, plain},
		{"run", "-postgres", dsn, "-schema", schema, "-history=false", plain},
		{"serve", "-postgres", dsn, "-schema", schema, "-addr", "127.0.0.1:0", "-key-file", newFile},
	} {
		var out, errb bytes.Buffer
		var code int
		if args[0] == "run" {
			code = runScheduler(ctx, nil, args[1:], &out, &errb)
		} else {
			code = run(args, nil, &out, &errb)
		}
		if code != 1 || !strings.Contains(errb.String(), oldKey.ID()) || !strings.Contains(errb.String(), "-key-file") {
			t.Errorf("%v = %d, stderr %q; want 1 naming key %s and -key-file", args, code, errb.String(), oldKey.ID())
		}
	}
	if _, err := st.GetJob(ctx, "default", "plain"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("a refused run put its job: %v", err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"reseal", "-postgres", dsn, "-schema", schema, "-key-file", newFile, "-old-key-file", oldFile}, nil, &out, &errb); code != 0 {
		t.Fatalf("reseal -postgres = %d, stderr %q", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "resealed 1 jobs with key "+newKey.ID()) {
		t.Errorf("reseal printed %q, want 1 job with key %s", out.String(), newKey.ID())
	}
	r, err := st.GetJob(ctx, "c", "j")
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := secrets.KeyID(r.Job.Action.Request.Authentication.Password); id != newKey.ID() || r.ETag != put.ETag {
		t.Errorf("after reseal: key %s, ETag %q; want key %s and ETag %q", id, r.ETag, newKey.ID(), put.ETag)
	}
}

// TestMissingKeyFileOverSealedDatabase: with DB.key gone, run, serve and
// reseal refuse a database that holds secrets sealed with its key, naming
// the key and -key-file, and make no key file; with a key file that lacks
// the key, they refuse too; with the right key given by -key-file, run
// goes on.
func TestMissingKeyFileOverSealedDatabase(t *testing.T) {
	dir := t.TempDir()
	db, _ := runSealedJob(t, dir)
	keys, err := secrets.ReadKeyFile(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	id := keys[0].ID()
	saved := filepath.Join(dir, "saved.key")
	if err := os.Rename(db+".key", saved); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.key")
	if _, err := secrets.WriteKeyFile(other); err != nil {
		t.Fatal(err)
	}
	job := writeRunFile(t, dir, "plain.json", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "GET"}, "retryPolicy": {"retryType": "None"}}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tt := range []struct {
		name string
		cmd  func(stdout, stderr *bytes.Buffer) int
		want []string // in stderr
	}{
		{"run", func(stdout, stderr *bytes.Buffer) int {
			return runScheduler(ctx, nil, []string{"-db", db, "-history=false", job}, stdout, stderr)
		}, []string{id, "-key-file", db + ".key is missing", "action.request.authentication.password"}},
		{"serve", func(stdout, stderr *bytes.Buffer) int {
			return run([]string{"serve", "-addr", "127.0.0.1:0", "-db", db}, nil, stdout, stderr)
		}, []string{id, "-key-file", db + ".key is missing"}},
		{"reseal", func(stdout, stderr *bytes.Buffer) int {
			return run([]string{"reseal", "-db", db}, nil, stdout, stderr)
		}, []string{id, "-key-file", db + ".key is missing"}},
		{"run with another key", func(stdout, stderr *bytes.Buffer) int {
			return runScheduler(ctx, nil, []string{"-db", db, "-history=false", "-key-file", other, job}, stdout, stderr)
		}, []string{id, "-key-file", other}},
		{"reseal with another key", func(stdout, stderr *bytes.Buffer) int {
			return run([]string{"reseal", "-db", db, "-key-file", other}, nil, stdout, stderr)
		}, []string{id, "-key-file", other}},
	} {
		var out, errb bytes.Buffer
		code := tt.cmd(&out, &errb)
		if code != 1 {
			t.Errorf("%s = %d, want 1; stderr:\n%s", tt.name, code, errb.String())
		}
		for _, w := range tt.want {
			if !strings.Contains(errb.String(), w) {
				t.Errorf("%s: stderr does not name %q:\n%s", tt.name, w, errb.String())
			}
		}
		if _, err := os.Stat(db + ".key"); err == nil {
			t.Fatalf("%s created %s over a database sealed with another key", tt.name, db+".key")
		}
	}
	var out, errb bytes.Buffer
	if code := runScheduler(ctx, nil, []string{"-db", db, "-history=false", "-key-file", saved, job}, &out, &errb); code != 0 {
		t.Errorf("run with the database's key = %d, stderr:\n%s", code, errb.String())
	}
	if id, _ := secrets.KeyID(storedPassword(t, db)); id != keys[0].ID() {
		t.Errorf("the stored password is sealed with %s, want %s", id, keys[0].ID())
	}
}

// TestResealMakesNoKey: reseal of a database without DB.key, -key-file or
// JOBCLOCK_SECRETS_KEY says there is no key and creates none, even when
// the database holds no sealed secret.
func TestResealMakesNoKey(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "jobs.db")
	job := writeRunFile(t, dir, "plain.json", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "GET"}, "retryPolicy": {"retryType": "None"}}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	if code := runScheduler(ctx, nil, []string{"-db", db, "-history=false", job}, &out, &errb); code != 0 {
		t.Fatalf("run -db = %d, stderr:\n%s", code, errb.String())
	}
	if err := os.Remove(db + ".key"); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := run([]string{"reseal", "-db", db}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "no key") {
		t.Errorf("reseal without a key = %d, stderr %q; want 1 saying there is no key", code, errb.String())
	}
	if _, err := os.Stat(db + ".key"); err == nil {
		t.Errorf("reseal created %s", db+".key")
	}
	// A database without sealed secrets may be given a new key.
	errb.Reset()
	if code := runScheduler(ctx, nil, []string{"-db", db, "-history=false", job}, &out, &errb); code != 0 {
		t.Fatalf("second run -db = %d, stderr:\n%s", code, errb.String())
	}
	if _, err := os.Stat(db + ".key"); err != nil {
		t.Errorf("run over a database without sealed secrets made no key file: %v", err)
	}
}
