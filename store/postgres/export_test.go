package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// SetHook sets the function run before each step of a multi-statement
// transaction.
func (s *Store) SetHook(h func(ctx context.Context, tx pgx.Tx, step string)) { s.hook = h }
