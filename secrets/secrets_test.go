package secrets_test

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jobclock/scheduler/secrets"
)

func newKey(t *testing.T) *secrets.Key {
	t.Helper()
	k, _, err := secrets.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	k := newKey(t)
	r, err := secrets.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := r.Seal("hunter2", "jobs/a:password")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "hunter2") || !strings.HasPrefix(sealed, secrets.Prefix+k.ID()+":") {
		t.Fatalf("Seal = %q, want %s%s:... without the plaintext", sealed, secrets.Prefix, k.ID())
	}
	if !secrets.IsSealed(sealed) {
		t.Errorf("IsSealed(%q) = false", sealed)
	}
	if id, ok := secrets.KeyID(sealed); !ok || id != k.ID() {
		t.Errorf("KeyID = %q, %v, want %q, true", id, ok, k.ID())
	}
	again, _ := r.Seal("hunter2", "jobs/a:password")
	if again == sealed {
		t.Error("two seals of one value are equal; the nonce must differ")
	}
	got, err := r.Open(sealed, "jobs/a:password")
	if err != nil || got != "hunter2" {
		t.Fatalf("Open = %q, %v, want hunter2", got, err)
	}
	if _, err := r.Open(sealed, "jobs/b:password"); !errors.Is(err, secrets.ErrOpen) {
		t.Errorf("Open in another context: %v, want ErrOpen", err)
	}
	tampered := sealed[:len(sealed)-2] + map[bool]string{true: "AA", false: "BB"}[!strings.HasSuffix(sealed, "AA")]
	if _, err := r.Open(tampered, "jobs/a:password"); !errors.Is(err, secrets.ErrOpen) {
		t.Errorf("Open of an altered value: %v, want ErrOpen", err)
	}
	other, _ := secrets.NewKeyring(newKey(t))
	if _, err := other.Open(sealed, "jobs/a:password"); !errors.Is(err, secrets.ErrUnknownKey) {
		t.Errorf("Open with another keyring: %v, want ErrUnknownKey", err)
	}
	var none *secrets.Keyring
	if _, err := none.Open(sealed, "jobs/a:password"); !errors.Is(err, secrets.ErrUnknownKey) {
		t.Errorf("Open with a nil keyring: %v, want ErrUnknownKey", err)
	}
	if _, err := none.Seal("x", ""); err == nil {
		t.Error("Seal with a nil keyring succeeded")
	}
	for _, s := range []string{"", "hunter2", "sealed:v1:", "sealed:v1:0123456789abcdef:", "sealed:v1:XYZ:abc", "sealed:v1:0123456789ABCDEF:abc"} {
		if secrets.IsSealed(s) {
			t.Errorf("IsSealed(%q) = true", s)
		}
		if _, err := r.Open(s, ""); err == nil {
			t.Errorf("Open(%q) succeeded", s)
		}
	}
}

func TestRotation(t *testing.T) {
	old, cur := newKey(t), newKey(t)
	before, _ := secrets.NewKeyring(old)
	sealed, _ := before.Seal("s3cret", "c")
	r, err := secrets.NewKeyring(cur, old, cur)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.IDs(); len(got) != 2 || got[0] != cur.ID() || got[1] != old.ID() || r.Primary() != cur.ID() {
		t.Fatalf("IDs = %v, Primary = %s, want [%s %s], %s", got, r.Primary(), cur.ID(), old.ID(), cur.ID())
	}
	if got, err := r.Open(sealed, "c"); err != nil || got != "s3cret" {
		t.Fatalf("Open of an old seal = %q, %v", got, err)
	}
	resealed, _ := r.Seal("s3cret", "c")
	if id, _ := secrets.KeyID(resealed); id != cur.ID() {
		t.Errorf("Seal used key %s, want the primary %s", id, cur.ID())
	}
	if _, err := secrets.NewKeyring(); err == nil {
		t.Error("NewKeyring() without keys succeeded")
	}
}

func TestParseKeys(t *testing.T) {
	material := make([]byte, 32)
	for i := range material {
		material[i] = byte(i)
	}
	want, _ := secrets.NewKey(material)
	b64 := base64.StdEncoding.EncodeToString(material)
	for _, text := range []string{
		b64, b64 + "\n", "# key\n" + b64 + " # primary\n", hex.EncodeToString(material),
		base64.RawURLEncoding.EncodeToString(material),
	} {
		keys, err := secrets.ParseKeys(text)
		if err != nil || len(keys) != 1 || keys[0].ID() != want.ID() {
			t.Errorf("ParseKeys(%q) = %v, %v, want key %s", text, keys, err, want.ID())
		}
	}
	keys, err := secrets.ParseKeys(b64 + ",\n" + hex.EncodeToString(material[:31]) + "ff")
	if err != nil || len(keys) != 2 {
		t.Fatalf("ParseKeys of two keys = %v, %v", keys, err)
	}
	for _, text := range []string{"", "# nothing\n", "abc", base64.StdEncoding.EncodeToString(material[:16]), b64 + " nope"} {
		_, err := secrets.ParseKeys(text)
		if err == nil {
			t.Errorf("ParseKeys(%q) succeeded", text)
			continue
		}
		if strings.Contains(text, "nope") && strings.Contains(err.Error(), "nope") {
			t.Errorf("ParseKeys error %q repeats the word", err)
		}
	}
}

func TestLoadOrCreateKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db.key")
	keys, created, err := secrets.LoadOrCreateKeyFile(path)
	if err != nil || !created || len(keys) != 1 {
		t.Fatalf("LoadOrCreateKeyFile = %v, %v, %v; want one new key", keys, created, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("key file mode = %o, want 600", mode)
	}
	again, created, err := secrets.LoadOrCreateKeyFile(path)
	if err != nil || created || len(again) != 1 || again[0].ID() != keys[0].ID() {
		t.Errorf("second LoadOrCreateKeyFile = %v, %v, %v; want the same key, not created", again, created, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files, want only the key file", len(entries))
	}
	if _, err := secrets.WriteKeyFile(path); err == nil {
		t.Error("WriteKeyFile over an existing file succeeded")
	} else if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("WriteKeyFile over an existing file: %v; want fs.ErrExist naming %s", err, path)
	}
	if err := os.WriteFile(path, []byte("garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := secrets.LoadOrCreateKeyFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("LoadOrCreateKeyFile of a bad file: %v, want an error naming it", err)
	}
}

func TestLoadOrCreateKeyFileRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			keys, _, err := secrets.LoadOrCreateKeyFile(path)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = keys[0].ID()
		})
	}
	wg.Wait()
	for _, id := range ids[1:] {
		if id != ids[0] {
			t.Fatalf("concurrent callers got different keys: %v", ids)
		}
	}
}
