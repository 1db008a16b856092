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
	"strings"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/postgres"
)

// keyEnv is the environment variable that holds the secrets keys when
// -key-file is not given.
const keyEnv = "JOBCLOCK_SECRETS_KEY"

// keyUsage is the part of run's and serve's usage about secrets.
const keyUsage = `Secrets (Basic and certificate passwords, client certificates, OAuth
secrets, SAS tokens and keys) are stored sealed with AES-256-GCM. The key
comes from -key-file, else from the ` + keyEnv + ` environment
variable, else, with a SQLite database, from the file DB.key next to it,
created (readable by its owner only) when missing: keep it with the
database, which is useless without it. A key file holds one key per line
(base64 of 32 bytes, as "jobclock keygen" or "openssl rand -base64 32"
writes), the first of which seals and all of which open; ` + keyEnv + `
holds the same text. Without a key (-postgres without -key-file or
` + keyEnv + `), jobs with secrets are refused; in memory (run without
-db or -postgres) they are kept as given. See "jobclock reseal" to rotate.
`

// keyFlags are the flags that say where the secrets keys are.
type keyFlags struct {
	file *string
}

func addKeyFlags(fs *flag.FlagSet) *keyFlags {
	return &keyFlags{file: fs.String("key-file", "", "secrets key `file` (default: $"+keyEnv+", else DB.key next to a SQLite database, created when missing)")}
}

// keyring returns the keyring of load's keys, nil when there are none,
// and logs which key seals and where it came from.
func (k *keyFlags) keyring(dbPath string, log *slog.Logger, more ...*secrets.Key) (*secrets.Keyring, error) {
	keys, src, err := k.load(dbPath, log)
	if err != nil || keys == nil {
		return nil, err
	}
	r, err := secrets.NewKeyring(append(keys, more...)...)
	if err != nil {
		return nil, err
	}
	log.Info("secrets are sealed with key "+r.Primary(), "keys", strings.Join(r.IDs(), ","), "from", src)
	return r, nil
}

// load returns the keys of -key-file, else of $JOBCLOCK_SECRETS_KEY, else,
// when dbPath is set, of dbPath.key, created when missing; nil when none
// applies. src says where they came from.
func (k *keyFlags) load(dbPath string, log *slog.Logger) (keys []*secrets.Key, src string, err error) {
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
default, as for serve: $` + keyEnv + `, else FILE.key): secrets sealed
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
the database or a key cannot be used or a secret does not open (the jobs
rewritten until then stay rewritten), 2 on a usage error.

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
	ring, err := keys.keyring(*dbPath, log, olds...)
	if err == nil && ring == nil {
		err = fmt.Errorf("no key: give -key-file or set %s", keyEnv)
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
