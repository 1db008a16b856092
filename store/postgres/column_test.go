package postgres_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jobclock/scheduler/store/postgres"
)

// stressTexts are texts that the array forms of PostgreSQL must carry as
// they are: empty, quoted, escaped, the array literal's own punctuation,
// the word NULL, non-ASCII, and long.
var stressTexts = []string{"", `"`, `\`, `\"`, "{}", "{a,b}", ",", "NULL", "null", " spaced ", "tab\tnew\nline",
	"ünïcødé ✓ 日本", `{"a":[1,2,{"b":"c\"d"}],"e":null}`, strings.Repeat(`{"k":"v\\",`, 20000)}

// execModes are pgx's query exec modes, each of which a host's pool may
// use.
var execModes = []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
	pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol}

// TestColumnRoundTrip: columns go to the server and back unchanged, NULLs
// included, in each of the array types the store sends.
func TestColumnRoundTrip(t *testing.T) {
	var textVals []pgtype.Text
	var want []*string
	for _, s := range stressTexts {
		textVals = append(textVals, pgtype.Text{String: s, Valid: true})
		want = append(want, &s)
	}
	texts := postgres.Column(append(textVals, pgtype.Text{})...)
	want = append(want, nil)
	var intVals []pgtype.Int8
	wantInts := []*int64{}
	for _, n := range []int64{math.MinInt64, -1, 0, 1, 255, 256, math.MaxInt64} {
		intVals = append(intVals, pgtype.Int8{Int64: n, Valid: true})
		wantInts = append(wantInts, &n)
	}
	ints := postgres.Column(append(intVals, pgtype.Int8{Int64: 7})...)
	wantInts = append(wantInts, nil)
	small := postgres.Column(pgtype.Int4{Int32: math.MinInt32, Valid: true}, pgtype.Int4{Valid: true}, pgtype.Int4{Int32: math.MaxInt32, Valid: true})
	bools := postgres.Column(pgtype.Bool{Bool: true, Valid: true}, pgtype.Bool{Valid: true})
	empty := postgres.Column[pgtype.Text]()

	// Every query exec mode: those that do not learn the parameters'
	// types from the server take the columns' plain slices.
	for _, mode := range execModes {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(dsn(t))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = mode
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			var gotTexts []*string
			var gotInts []*int64
			var gotSmall []int32
			var gotBools []bool
			var gotEmpty []string
			var emptyText string
			err = conn.QueryRow(ctx, "SELECT $1::text[], $2::bigint[], $3::integer[], $4::boolean[], $5::text[], $5::text[]::text",
				texts, ints, small, bools, empty).Scan(&gotTexts, &gotInts, &gotSmall, &gotBools, &gotEmpty, &emptyText)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, gotTexts); diff != "" {
				t.Errorf("text[] (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantInts, gotInts); diff != "" {
				t.Errorf("bigint[] (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]int32{math.MinInt32, 0, math.MaxInt32}, gotSmall); diff != "" {
				t.Errorf("integer[] (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]bool{true, false}, gotBools); diff != "" {
				t.Errorf("boolean[] (-want +got):\n%s", diff)
			}
			if len(gotEmpty) != 0 || gotEmpty == nil || emptyText != "{}" {
				t.Errorf("empty text[] = %#v, as text %q; want an empty array, {}", gotEmpty, emptyText)
			}

			// unnest, as the record statements read them: the same rows in order.
			rows, err := conn.Query(ctx, "SELECT t, n FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS x(t, n, i) ORDER BY i", texts, ints)
			if err != nil {
				t.Fatal(err)
			}
			type pair struct {
				T *string
				N *int64
			}
			got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[pair])
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range got {
				var w pair
				if i < len(want) {
					w.T = want[i]
				}
				if i < len(wantInts) {
					w.N = wantInts[i]
				}
				if diff := cmp.Diff(w, p); diff != "" {
					t.Errorf("unnest row %d (-want +got):\n%s", i, diff)
				}
			}
			if len(got) != len(want) {
				t.Errorf("unnest: %d rows, want %d", len(got), len(want))
			}
		})
	}
}
