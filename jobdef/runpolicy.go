package jobdef

import (
	"slices"
	"strconv"
	"time"

	"github.com/jobclock/scheduler/internal/enum"
	"github.com/jobclock/scheduler/retry"
)

// RunPolicy says what happens to a job's occurrences that cannot run on
// time: the "runPolicy" object of a job definition, or of a job
// collection's properties, where it is the default of the collection's
// jobs. A job's own members win member by member; members that neither
// sets take the Scheduler's defaults (Config.Misfire and
// Config.MisfireThreshold), so a definition without runPolicy runs as
// Azure's would.
type RunPolicy struct {
	// Missed says what happens to occurrences missed while no
	// scheduler could run them (downtime, a disabled job, a collection
	// that was not Enabled): RunOnce, Skip or RunAll. Empty means the
	// collection's, else the Scheduler's Config.Misfire.
	Missed MissedPolicy `json:"missed,omitempty"`
	// CatchUpWindow is how late an occurrence may be found and still
	// run: an occurrence found later than this after its expected time
	// is skipped (a Skipped history entry says so). Zero means the
	// collection's, else none for RunOnce and RunAll and
	// Config.MisfireThreshold for Skip. At least one second.
	CatchUpWindow retry.Duration `json:"catchUpWindow,omitempty"`
	// Overlap says what happens to an occurrence that comes due while
	// the previous one of the same job is still in progress: Postpone,
	// Skip, BufferAll, AllowAll or CancelRunning. Empty means the
	// collection's, else Postpone.
	Overlap OverlapPolicy `json:"overlap,omitempty"`
	// PauseAfterFaults disables the job, with a stateReason that says
	// why, after this many consecutive faulted occurrences. Zero means
	// the collection's, else never.
	PauseAfterFaults int `json:"pauseAfterFaults,omitempty"`
}

// MissedPolicy is a [RunPolicy]'s "missed" member.
type MissedPolicy string

// The missed policies in their canonical spelling.
const (
	// MissedRunOnce runs a job once, as soon as it can, for all the
	// occurrences it missed (the run carries the expected time of the
	// first), then continues on its schedule.
	MissedRunOnce MissedPolicy = "RunOnce"
	// MissedSkip runs none of the missed occurrences that are later than
	// the catch-up window: the job continues with its next occurrence
	// after now.
	MissedSkip MissedPolicy = "Skip"
	// MissedRunAll runs every missed occurrence, one after the other.
	MissedRunAll MissedPolicy = "RunAll"
)

var missedPolicies = []MissedPolicy{MissedRunOnce, MissedSkip, MissedRunAll}

// Valid reports whether p is a known policy in canonical spelling.
func (p MissedPolicy) Valid() bool { return slices.Contains(missedPolicies, p) }

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given for validation to report.
func (p *MissedPolicy) UnmarshalJSON(b []byte) error { return enum.Unmarshal(b, p, missedPolicies) }

// OverlapPolicy is a [RunPolicy]'s "overlap" member.
type OverlapPolicy string

// The overlap policies in their canonical spelling.
const (
	// OverlapPostpone lets an occurrence that comes due while the
	// previous one is in progress wait until it ends (a Postponed
	// history entry says so); at most one waits, and later ones are
	// merged into it (a Skipped entry counts them).
	OverlapPostpone OverlapPolicy = "Postpone"
	// OverlapSkip passes over an occurrence that comes due while the
	// previous one is in progress (a Skipped entry says so).
	OverlapSkip OverlapPolicy = "Skip"
	// OverlapBufferAll runs every occurrence that comes due while the
	// previous one is in progress, in order, one at a time, after it;
	// at most MaxBuffered wait, and older ones beyond that are skipped.
	OverlapBufferAll OverlapPolicy = "BufferAll"
	// OverlapAllowAll starts an occurrence that comes due while
	// others of the job are in progress at once, beside them, each with
	// its own retries and errorAction; at most MaxRunning are in
	// progress at once, and an occurrence that comes due while that many
	// are is skipped (a Skipped entry says so).
	OverlapAllowAll OverlapPolicy = "AllowAll"
	// OverlapCancelRunning cancels the occurrence in progress when the
	// next one comes due (the running attempt's context is cancelled,
	// and a pending retry or errorAction is dropped) and starts the new
	// one.
	OverlapCancelRunning OverlapPolicy = "CancelRunning"
)

var overlapPolicies = []OverlapPolicy{OverlapPostpone, OverlapSkip, OverlapBufferAll, OverlapAllowAll, OverlapCancelRunning}

// Valid reports whether p is a known policy in canonical spelling.
func (p OverlapPolicy) Valid() bool { return slices.Contains(overlapPolicies, p) }

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given for validation to report.
func (p *OverlapPolicy) UnmarshalJSON(b []byte) error { return enum.Unmarshal(b, p, overlapPolicies) }

// Limits of a run policy and a pause.
const (
	// MaxBuffered is the most occurrences that wait behind the one in
	// progress under OverlapBufferAll.
	MaxBuffered = 100
	// MaxRunning is the most occurrences of one job in progress at once
	// under OverlapAllowAll (running, or waiting for a retry or their
	// errorAction).
	MaxRunning = 10
	// MinCatchUpWindow is the shortest catch-up window.
	MinCatchUpWindow = time.Second
	// MaxPauseAfterFaults is the largest pauseAfterFaults.
	MaxPauseAfterFaults = 1000
	// MaxStateReason is the longest stateReason, in characters.
	MaxStateReason = 256
)

// Clone returns a copy of p; nil for a nil p.
func (p *RunPolicy) Clone() *RunPolicy {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// Over returns p with each member that p leaves unset taken from def,
// the collection's default (nil: none). Either may be nil.
func (p *RunPolicy) Over(def *RunPolicy) RunPolicy {
	var r RunPolicy
	if p != nil {
		r = *p
	}
	if def == nil {
		return r
	}
	if r.Missed == "" {
		r.Missed = def.Missed
	}
	if r.CatchUpWindow == 0 {
		r.CatchUpWindow = def.CatchUpWindow
	}
	if r.Overlap == "" {
		r.Overlap = def.Overlap
	}
	if r.PauseAfterFaults == 0 {
		r.PauseAfterFaults = def.PauseAfterFaults
	}
	return r
}

// runPolicy adds the problems of p, found at path, to c.
func (c *checker) runPolicy(path string, p *RunPolicy) {
	if p == nil {
		return
	}
	if p.Missed != "" && !p.Missed.Valid() {
		c.add(path+".missed", valueText(string(p.Missed)), "is not a missed policy (RunOnce, Skip or RunAll)")
	}
	if p.CatchUpWindow != 0 && time.Duration(p.CatchUpWindow) < MinCatchUpWindow {
		c.add(path+".catchUpWindow", strconv.Quote(p.CatchUpWindow.String()), "is shorter than one second (PT1S)")
	}
	if p.Overlap != "" && !p.Overlap.Valid() {
		c.add(path+".overlap", valueText(string(p.Overlap)), "is not an overlap policy (Postpone, Skip, BufferAll, AllowAll or CancelRunning)")
	}
	if p.PauseAfterFaults < 0 || p.PauseAfterFaults > MaxPauseAfterFaults {
		c.add(path+".pauseAfterFaults", strconv.Itoa(p.PauseAfterFaults), "is not between 1 and 1000 (0 or absent: never)")
	}
}
