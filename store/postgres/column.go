package postgres

import (
	"database/sql/driver"

	"github.com/jackc/pgx/v5/pgtype"
)

// column is an array parameter (text[], bigint[], integer[], boolean[])
// over values the store keeps, one of pgx's nullable value types: pgx
// encodes each element through a pointer into the slice. A []string or
// []int64 would have pgx copy each element to the heap to pass it on (an
// allocation per element); a column allocates nothing once its slice has
// grown, and a store reuses its columns from batch to batch. Where the
// type of a parameter is not known (the query exec modes that do not ask
// the server, such as the simple protocol of a pool behind a transaction
// pooler), pgx takes the plain slice through Value instead.
type column[T pgtype.Text | pgtype.Int8 | pgtype.Int4 | pgtype.Bool] struct {
	v    []T
	dims [1]pgtype.ArrayDimension
}

// add appends v.
func (c *column[T]) add(v T) { c.v = append(c.v, v) }

// reset empties c, keeping its room but nothing of its values.
func (c *column[T]) reset() {
	clear(c.v)
	c.v = c.v[:0]
}

// Dimensions implements [pgtype.ArrayGetter]: one dimension, from 1; none
// for an empty array, as PostgreSQL writes '{}'.
func (c *column[T]) Dimensions() []pgtype.ArrayDimension {
	if len(c.v) == 0 {
		return c.dims[:0]
	}
	c.dims[0] = pgtype.ArrayDimension{Length: int32(len(c.v)), LowerBound: 1}
	return c.dims[:]
}

// Index implements [pgtype.ArrayGetter].
func (c *column[T]) Index(i int) any { return &c.v[i] }

// IndexType implements [pgtype.ArrayGetter].
func (c *column[T]) IndexType() any { return (*T)(nil) }

// Value implements [driver.Valuer] for pgx, which calls it only where it
// cannot encode c as an array of a known type: it returns the slice of
// pgx's values, whose array type pgx finds from the Go type. It is not a
// value database/sql would accept.
func (c *column[T]) Value() (driver.Value, error) {
	if c.v == nil {
		return []T{}, nil // an empty array, not NULL
	}
	return c.v, nil
}

// text returns s as a text value that is not NULL.
func text(s string) pgtype.Text { return pgtype.Text{String: s, Valid: true} }

// bigint returns n as a bigint value, NULL when !ok.
func bigint(n int64, ok bool) pgtype.Int8 { return pgtype.Int8{Int64: n, Valid: ok} }
