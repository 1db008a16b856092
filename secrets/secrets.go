// Package secrets seals the secrets of job definitions (passwords, client
// certificates, OAuth secrets, SAS tokens and keys) so that they are
// stored encrypted, and opens them again for the executors.
//
// A [Keyring] holds one or more AES-256 keys. The first, its primary key,
// seals; every key opens what it sealed. A sealed value is a string
//
//	sealed:v1:KEYID:DATA
//
// where KEYID names the key that sealed it (16 hex digits derived from
// the key, see [Key.ID]) and DATA is the unpadded base64url encoding of a
// 12-byte random nonce followed by the AES-256-GCM ciphertext and tag.
// Each value is sealed for a context (the scheduler passes the job, the
// JSON path of the field, where the secret is sent and how it is used):
// it opens only for the same context, so a sealed value copied into
// another job or another field does not open there.
//
// Keys rotate without downtime: put the new key first and the old one
// after it in the keyring (in a key file, one key per line), re-seal what
// is stored (jobclock reseal, or Scheduler.ResealSecrets), then drop the
// old key.
//
// A key is written as the standard base64 encoding of its 32 bytes (what
// "openssl rand -base64 32" prints) or as 64 hex digits. A key file holds
// one or more keys separated by white space or commas; a '#' starts a
// comment that runs to the end of the line.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the size of a key in bytes (AES-256).
const KeySize = 32

// Prefix starts every sealed value.
const Prefix = "sealed:v1:"

// idLen is the length of a key id in hex digits.
const idLen = 16

// ErrUnknownKey reports a sealed value whose key is not in the keyring.
var ErrUnknownKey = errors.New("secrets: the value was sealed with a key that is not in the keyring")

// ErrOpen reports a sealed value that does not open: it was changed, or
// sealed for another context.
var ErrOpen = errors.New("secrets: the sealed value does not open (altered, or sealed for another job or field)")

// Key is one AES-256 key.
type Key struct {
	id   string
	aead cipher.AEAD
}

// NewKey returns the key made of material, which must be KeySize bytes.
func NewKey(material []byte) (*Key, error) {
	if len(material) != KeySize {
		return nil, fmt.Errorf("secrets: a key is %d bytes, not %d", KeySize, len(material))
	}
	block, err := aes.NewCipher(material)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(append([]byte("jobclock secrets key id\x00"), material...))
	return &Key{id: hex.EncodeToString(sum[:idLen/2]), aead: aead}, nil
}

// GenerateKey returns a new random key and its text form (base64 and a
// newline), as a key file holds it.
func GenerateKey() (*Key, string, error) {
	material := make([]byte, KeySize)
	if _, err := rand.Read(material); err != nil {
		return nil, "", err
	}
	k, err := NewKey(material)
	if err != nil {
		return nil, "", err
	}
	return k, base64.StdEncoding.EncodeToString(material) + "\n", nil
}

// ID returns the key's id: 16 hex digits of a hash of the key, which
// sealed values name and which may be logged.
func (k *Key) ID() string { return k.id }

// ParseKeys reads the keys in text: each one the base64 encoding of 32
// bytes or 64 hex digits, separated by white space or commas, with '#'
// comments. It fails when text holds no key or a word that is not one; the
// error names the word's position, never its value.
func ParseKeys(text string) ([]*Key, error) {
	var keys []*Key
	n := 0
	for line := range strings.Lines(text) {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, w := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' || r == '\n' }) {
			n++
			material, err := decodeKey(w)
			if err != nil {
				return nil, fmt.Errorf("secrets: key %d: %w", n, err)
			}
			k, err := NewKey(material)
			if err != nil {
				return nil, fmt.Errorf("secrets: key %d: %w", n, err)
			}
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("secrets: no key given")
	}
	return keys, nil
}

// decodeKey decodes one key word.
func decodeKey(w string) ([]byte, error) {
	if len(w) == 2*KeySize {
		if b, err := hex.DecodeString(w); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(w); err == nil {
			if len(b) != KeySize {
				return nil, fmt.Errorf("is %d bytes, not %d", len(b), KeySize)
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("is neither base64 of %d bytes nor %d hex digits", KeySize, 2*KeySize)
}

// ReadKeyFile reads the keys in the file at path (see [ParseKeys]).
func ReadKeyFile(path string) ([]*Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	keys, err := ParseKeys(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return keys, nil
}

// LoadOrCreateKeyFile reads the keys in the file at path; when the file
// does not exist, it creates it, readable and writable by its owner only
// (mode 0600), with a new random key. created reports whether it did. Two
// processes that call it at once end up with the same key.
func LoadOrCreateKeyFile(path string) (keys []*Key, created bool, err error) {
	keys, err = ReadKeyFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return keys, false, err
	}
	k, text, err := GenerateKey()
	if err != nil {
		return nil, false, err
	}
	if err := writeNew(path, text); err != nil {
		if errors.Is(err, fs.ErrExist) { // another process was first
			keys, err = ReadKeyFile(path)
			return keys, false, err
		}
		return nil, false, err
	}
	return []*Key{k}, true, nil
}

// writeNew writes text to a new file at path (mode 0600), failing with
// fs.ErrExist when the file exists. The file appears complete or not at
// all: it is written under a temporary name, then linked into place.
func writeNew(path, text string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".jobclock-key-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(text); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Name the file, not the temporary one linked to it.
			return &existsError{path}
		}
		return err
	}
	return nil
}

// existsError reports that a key file to write is there already. It
// matches fs.ErrExist.
type existsError struct{ path string }

func (e *existsError) Error() string {
	return e.path + " already exists; a new key is written only where no file is (give another name)"
}

func (e *existsError) Is(target error) bool { return target == fs.ErrExist }

// WriteKeyFile creates a file at path (mode 0600) holding a new random key
// and returns the key. It fails when the file exists.
func WriteKeyFile(path string) (*Key, error) {
	k, text, err := GenerateKey()
	if err != nil {
		return nil, err
	}
	if err := writeNew(path, text); err != nil {
		return nil, err
	}
	return k, nil
}

// Keyring is a set of keys, the first of which seals. It is safe for
// concurrent use. A nil *Keyring has no key: Seal fails and Open fails on
// every sealed value.
type Keyring struct {
	primary *Key
	keys    map[string]*Key
	ids     []string
}

// NewKeyring returns a keyring that seals with keys[0] and opens with any
// of keys. A key given twice counts once. It fails without keys.
func NewKeyring(keys ...*Key) (*Keyring, error) {
	if len(keys) == 0 || keys[0] == nil {
		return nil, errors.New("secrets: a keyring needs a key")
	}
	r := &Keyring{primary: keys[0], keys: make(map[string]*Key, len(keys))}
	for _, k := range keys {
		if k == nil {
			return nil, errors.New("secrets: nil key")
		}
		if _, dup := r.keys[k.id]; !dup {
			r.keys[k.id] = k
			r.ids = append(r.ids, k.id)
		}
	}
	return r, nil
}

// Primary returns the id of the key that seals.
func (r *Keyring) Primary() string { return r.primary.id }

// IDs returns the ids of the keyring's keys, the primary first.
func (r *Keyring) IDs() []string { return append([]string(nil), r.ids...) }

// Seal returns plaintext sealed with the primary key for context.
func (r *Keyring) Seal(plaintext, context string) (string, error) {
	if r == nil {
		return "", errors.New("secrets: no key to seal with")
	}
	k := r.primary
	buf := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plaintext)+k.aead.Overhead())
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	buf = k.aead.Seal(buf, buf, []byte(plaintext), []byte(context))
	return Prefix + k.id + ":" + base64.RawURLEncoding.EncodeToString(buf), nil
}

// Open returns the plaintext of a value sealed for context. It fails with
// [ErrUnknownKey] when the value's key is not in the keyring and with
// [ErrOpen] when it does not open; a value that is not sealed (see
// [IsSealed]) is an error too.
func (r *Keyring) Open(sealed, context string) (string, error) {
	id, data, ok := split(sealed)
	if !ok {
		return "", errors.New("secrets: not a sealed value")
	}
	var k *Key
	if r != nil {
		k = r.keys[id]
	}
	if k == nil {
		return "", fmt.Errorf("%w (key %s)", ErrUnknownKey, id)
	}
	raw, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil || len(raw) < k.aead.NonceSize()+k.aead.Overhead() {
		return "", ErrOpen
	}
	n := k.aead.NonceSize()
	plain, err := k.aead.Open(raw[n:n], raw[:n], raw[n:], []byte(context)) // in place
	if err != nil {
		return "", ErrOpen
	}
	return string(plain), nil
}

// IsSealed reports whether s has the form of a sealed value.
func IsSealed(s string) bool {
	_, _, ok := split(s)
	return ok
}

// KeyID returns the id of the key s was sealed with; ok is false when s is
// not a sealed value.
func KeyID(s string) (id string, ok bool) {
	id, _, ok = split(s)
	return id, ok
}

// split parses "sealed:v1:KEYID:DATA".
func split(s string) (id, data string, ok bool) {
	rest, ok := strings.CutPrefix(s, Prefix)
	if !ok {
		return "", "", false
	}
	id, data, ok = strings.Cut(rest, ":")
	if !ok || len(id) != idLen || data == "" {
		return "", "", false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", "", false
		}
	}
	return id, data, true
}
