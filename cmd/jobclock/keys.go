package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/sqlite"
)

// keyEnv is the environment variable that holds the secrets keys when
// -key-file is not given.
const keyEnv = "JOBCLOCK_SECRETS_KEY"

// keyUsage is the part of run's and serve's usage about secrets.
const keyUsage = `Secrets (Basic and certificate passwords, client certificates, OAuth
secrets, SAS tokens and keys) are stored sealed with AES-256-GCM. The key
comes from -key-file, else from the ` + keyEnv + ` environment
variable, else, with a SQLite database, from the file DB.key next to it,
created (readable by its owner only) when missing and the database holds
no sealed secret: keep it with the database, which is useless without it.
A database whose secrets are sealed with a key that the keys lack is
refused, naming the key (by serve, a SQLite database). A key file holds one key per line
(base64 of 32 bytes, as "jobclock keygen" or "openssl rand -base64 32"
writes), the first of which seals and all of which open; ` + keyEnv + `
holds the same text. Without a key (-postgres without -key-file or
` + keyEnv + `), jobs with secrets are refused; in memory (run without
-db or -postgres) they are kept as given. See "jobclock reseal" to rotate.
`

// keyFlags are the flags that say where the secrets keys are.
type keyFlags struct {
	file *string
	src  string // where the keyring's keys came from, once read
}

func addKeyFlags(fs *flag.FlagSet) *keyFlags {
	return &keyFlags{file: fs.String("key-file", "", "secrets key `file` (default: $"+keyEnv+", else DB.key next to a SQLite database, created when missing for a database without sealed secrets)")}
}

// keyring returns the keyring of load's keys and more, nil when there are
// none, and logs which key seals and where it came from. With a SQLite
// database dbPath that exists, it reads the keys the database's secrets
// are sealed with and refuses a keyring that lacks one (see
// checkSealed); the key file dbPath.key is created only for a database
// that holds no sealed secret.
func (k *keyFlags) keyring(dbPath string, log *slog.Logger, more ...*secrets.Key) (*secrets.Keyring, error) {
	return k.open(dbPath, true, log, more)
}

// existingKeyring is keyring without creating dbPath.key: for reseal,
// which never makes a key.
func (k *keyFlags) existingKeyring(dbPath string, log *slog.Logger, more ...*secrets.Key) (*secrets.Keyring, error) {
	return k.open(dbPath, false, log, more)
}

// open is keyring, creating dbPath.key only when create is set.
func (k *keyFlags) open(dbPath string, create bool, log *slog.Logger, more []*secrets.Key) (*secrets.Keyring, error) {
	sealed, err := sealedInFile(dbPath)
	if err != nil {
		return nil, err
	}
	keys, src, err := k.load(dbPath, create && len(sealed) == 0, log)
	if err != nil {
		return nil, err
	}
	if keys == nil && len(sealed) > 0 && *k.file == "" && os.Getenv(keyEnv) == "" {
		return nil, fmt.Errorf("the database %s holds secrets sealed with %s, and its key file %s is missing: restore it, or give the key file that holds them with -key-file (or its text in $%s); a new key would not open them",
			dbPath, describeKeys(sealed), dbPath+".key", keyEnv)
	}
	var r *secrets.Keyring
	if keys != nil {
		if r, err = secrets.NewKeyring(append(keys, more...)...); err != nil {
			return nil, err
		}
	}
	k.src = src
	if err := checkSealed(sealed, r, "the database "+dbPath, src); err != nil {
		return nil, err
	}
	if r != nil {
		log.Info("secrets are sealed with key "+r.Primary(), "keys", strings.Join(r.IDs(), ","), "from", src)
	}
	return r, nil
}

// checkStore returns an error when ring, which keyring returned, lacks a
// key that secrets in store (PostgreSQL: keyring checks a SQLite
// database itself) are sealed with.
func (k *keyFlags) checkStore(ctx context.Context, store scheduler.Store, ring *secrets.Keyring) error {
	sealed, err := scheduler.SealedKeys(ctx, store)
	if err != nil {
		return fmt.Errorf("read the sealed secrets of the database: %w", err)
	}
	return checkSealed(sealed, ring, "the database", k.src)
}

// sealedInFile returns the keys that the secrets in the SQLite database
// dbPath are sealed with; none when dbPath is empty or no file is there.
func sealedInFile(dbPath string) ([]scheduler.SealedKey, error) {
	if dbPath == "" {
		return nil, nil
	}
	if _, err := os.Stat(dbPath); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, dbPath, &sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dbPath, err)
	}
	defer st.Close()
	sealed, err := scheduler.SealedKeys(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("read the sealed secrets of %s: %w", dbPath, err)
	}
	return sealed, nil
}

// checkSealed returns an error when ring (nil: no key) lacks a key that
// secrets of the database db are sealed with; src says where ring's keys
// came from.
func checkSealed(sealed []scheduler.SealedKey, ring *secrets.Keyring, db, src string) error {
	var missing []scheduler.SealedKey
	for _, k := range sealed {
		if ring == nil || !slices.Contains(ring.IDs(), k.ID) {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if ring == nil {
		return fmt.Errorf("%s holds secrets sealed with %s, and there is no key: give the key file that holds them with -key-file (or its text in $%s)",
			db, describeKeys(missing), keyEnv)
	}
	return fmt.Errorf("%s holds secrets sealed with %s, which the keys from %s (%s) lack: give the key file that holds them with -key-file (or its text in $%s)",
		db, describeKeys(missing), src, strings.Join(ring.IDs(), ","), keyEnv)
}

// describeKeys names keys for an error: "key 1a2b3c4d (2 jobs, the first
// c/j at action.request.authentication.password)".
func describeKeys(keys []scheduler.SealedKey) string {
	var b strings.Builder
	for i, k := range keys {
		switch {
		case i == 0 && len(keys) == 1:
			b.WriteString("key ")
		case i == 0:
			b.WriteString("keys ")
		default:
			b.WriteString(", ")
		}
		jobs := "1 job:"
		if k.Jobs != 1 {
			jobs = fmt.Sprintf("%d jobs, the first", k.Jobs)
		}
		fmt.Fprintf(&b, "%s (%s %s/%s at %s)", k.ID, jobs, k.First.Collection, k.First.Name, k.Path)
	}
	return b.String()
}

// load returns the keys of -key-file, else of $JOBCLOCK_SECRETS_KEY, else,
// when dbPath is set, of dbPath.key, created when missing if create is
// set; nil when none applies. src says where they came from.
func (k *keyFlags) load(dbPath string, create bool, log *slog.Logger) (keys []*secrets.Key, src string, err error) {
	switch env := os.Getenv(keyEnv); {
	case *k.file != "":
		if keys, err = secrets.ReadKeyFile(*k.file); err != nil {
			return nil, "", fmt.Errorf("-key-file: %w", err)
		}
		return keys, *k.file, nil
	case env != "":
		if keys, err = secrets.ParseKeys(env); err != nil {
			return nil, "", fmt.Errorf("%s: %w", keyEnv, err)
		}
		return keys, "$" + keyEnv, nil
	case dbPath != "":
		if err := dbDirExists(dbPath); err != nil {
			return nil, "", err
		}
		path := dbPath + ".key"
		if !create {
			keys, err := secrets.ReadKeyFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, "", nil
			}
			if err != nil {
				return nil, "", fmt.Errorf("secrets key: %w", err)
			}
			return keys, path, nil
		}
		keys, created, err := secrets.LoadOrCreateKeyFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("secrets key: %w", err)
		}
		if created {
			log.Warn("created the secrets key file; keep it with the database, whose secrets cannot be opened without it", "file", path, "key", keys[0].ID())
		}
		return keys, path, nil
	default:
		return nil, "", nil
	}
}

// dbDirExists returns an error naming the directory of the database file
// dbPath when it is not one (the key file is written there first).
func dbDirExists(dbPath string) error {
	dir := filepath.Dir(dbPath)
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("-db %s: the directory %s does not exist", dbPath, dir)
	case err != nil:
		return fmt.Errorf("-db %s: %w", dbPath, err)
	case !fi.IsDir():
		return fmt.Errorf("-db %s: %s is not a directory", dbPath, dir)
	}
	return nil
}

// stringsFlag is a flag that may be given several times.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

const resealUsage = `usage: jobclock reseal (-db FILE | -postgres DSN [-schema S]) [-key-file NEW] [-old-key-file OLD]...

Seals every secret stored in the database with the first key of NEW (by
default, as for serve: $` + keyEnv + `, else FILE.key, which reseal never
creates): secrets sealed
with a key of OLD (or another key of NEW) and secrets stored before they
were sealed. Each job is rewritten in one atomic step and keeps its ETag
and schedule; jobs already sealed with that key are left alone, so reseal
can be run again after an interruption. It may run while schedulers use
the database, once they all have NEW among their keys.

Rotating a key: write a new key ("jobclock keygen new.key"); give every
scheduler a key file holding the old key then the new one (they seal with
the old one and open both), then one holding the new key then the old one;
run "jobclock reseal -key-file new.key -old-key-file old.key"; finally drop
the old key from the schedulers' key files.

It prints the number of jobs rewritten. Exit status: 0 on success, 1 when
the database or a key cannot be used, a key that the database's secrets
are sealed with is neither in NEW nor in OLD (nothing is rewritten), or a
secret does not open (the jobs rewritten until then stay rewritten), 2 on
a usage error.

Flags:
`

// resealCmd is "jobclock reseal": it returns the exit status.
func resealCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reseal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, resealUsage)
		fs.PrintDefaults()
	}
	dbPath := fs.String("db", "", "SQLite database `file`")
	dsn := fs.String("postgres", "", "PostgreSQL connection string (`DSN`)")
	schema := fs.String("schema", postgres.DefaultSchema, "PostgreSQL `schema` of the tables (with -postgres)")
	keys := addKeyFlags(fs)
	var old stringsFlag
	fs.Var(&old, "old-key-file", "key `file` whose keys open secrets but do not seal (may be given several times)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "jobclock reseal: unexpected argument %q\n", fs.Arg(0))
		return 2
	case (*dbPath == "") == (*dsn == ""):
		fmt.Fprintln(stderr, "jobclock reseal: give one of -db and -postgres")
		return 2
	}
	if *dbPath != "" {
		if _, err := os.Stat(*dbPath); err != nil {
			fmt.Fprintf(stderr, "jobclock reseal: -db: %v\n", err)
			return 1
		}
	}
	var olds []*secrets.Key
	for _, f := range old {
		k, err := secrets.ReadKeyFile(f)
		if err != nil {
			fmt.Fprintf(stderr, "jobclock reseal: -old-key-file: %v\n", err)
			return 1
		}
		olds = append(olds, k...)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ring, err := keys.existingKeyring(*dbPath, log, olds...)
	if err == nil && ring == nil {
		err = fmt.Errorf("no key: give -key-file or set %s", keyEnv)
		if *dbPath != "" {
			err = fmt.Errorf("no key: give -key-file or set %s (%s is missing; reseal makes no key)", keyEnv, *dbPath+".key")
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "jobclock reseal: %v\n", err)
		return 1
	}
	ctx := context.Background()
	store, closeStore, err := openStore(ctx, storeSpec{dbPath: *dbPath, dsn: *dsn, schema: *schema, log: log})
	if err != nil {
		fmt.Fprintf(stderr, "jobclock reseal: %v\n", err)
		return 1
	}
	defer closeStore()
	if *dsn != "" {
		if err := keys.checkStore(ctx, store, ring); err != nil {
			fmt.Fprintf(stderr, "jobclock reseal: %v\n", err)
			return 1
		}
	}
	s, err := scheduler.New(store, &scheduler.Config{Logger: log, Secrets: ring})
	if err != nil {
		fmt.Fprintf(stderr, "jobclock reseal: %v\n", err)
		return 1
	}
	n, err := s.ResealSecrets(ctx)
	fmt.Fprintf(stdout, "resealed %d jobs with key %s\n", n, ring.Primary())
	if err != nil {
		fmt.Fprintf(stderr, "jobclock reseal: %v\n", err)
		return 1
	}
	return 0
}

// keygenCmd is "jobclock keygen FILE": it writes a new key file.
func keygenCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "usage: jobclock keygen FILE\n\nWrites a new random secrets key to FILE (created, mode 0600; an existing file is left alone) and prints its id.")
		return 2
	}
	k, err := secrets.WriteKeyFile(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "jobclock keygen: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "key %s written to %s\n", k.ID(), args[0])
	return 0
}
