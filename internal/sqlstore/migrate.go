package sqlstore

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Migration is one step of a backend's schema: the statements that take the
// schema from Version-1 to Version.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// LoadMigrations reads the files NNN_name.sql of dir in fsys, numbered from
// 1 without gaps, in order.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name does not start with a version number and '_'", name)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(b)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: version %d, want %d (versions must run from 1 without gaps)", m.Name, m.Version, i+1)
		}
	}
	return out, nil
}

// NewerSchemaError reports a database whose schema was written by a newer
// build.
type NewerSchemaError struct {
	// Backend is "store/sqlite" or "store/postgres".
	Backend string
	// Found is the schema version in the database; Known the newest this
	// build has.
	Found, Known int
}

// Error says which versions and what to do.
func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("%s: database schema version %d is newer than this build supports (%d); upgrade jobclock", e.Backend, e.Found, e.Known)
}
