package dashboard

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/retry"
)

// sentence is a sentence of the page made of parts: text, and durations
// said in words with their ISO 8601 text as the title.
type sentence []part

// part is a piece of a sentence; Title, when set, is the ISO 8601 text
// of the duration Text says in words.
type part struct{ Text, Title string }

// say makes a sentence of its pieces: strings, retry.Durations (said in
// words), sentences, and anything else as fmt.Sprint prints it.
func say(pieces ...any) sentence {
	var out sentence
	for _, p := range pieces {
		switch p := p.(type) {
		case string:
			out = append(out, part{Text: p})
		case retry.Duration:
			out = append(out, part{Text: durationWords(time.Duration(p)), Title: p.String()})
		case sentence:
			out = append(out, p...)
		default:
			out = append(out, part{Text: fmt.Sprint(p)})
		}
	}
	return out
}

// durationWords says d in days, hours, minutes and seconds: "30 seconds",
// "1 hour and 30 minutes", "1.5 seconds".
func durationWords(d time.Duration) string {
	day := 24 * time.Hour
	var parts []string
	counted := func(n time.Duration, one string) {
		if n > 0 {
			parts = append(parts, strconv.Itoa(int(n))+" "+plural(int(n), one, one+"s"))
		}
	}
	counted(d/day, "day")
	counted(d%day/time.Hour, "hour")
	counted(d%time.Hour/time.Minute, "minute")
	if sec := d % time.Minute; sec > 0 || len(parts) == 0 {
		word := " seconds"
		if sec == time.Second {
			word = " second"
		}
		parts = append(parts, strconv.FormatFloat(sec.Seconds(), 'f', -1, 64)+word)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// failureWords says in sentences how job handles failure: the attempts'
// timeout, the retry policy, Retry-After, and the errorAction.
func failureWords(job *scheduler.Job) []sentence {
	a := &job.Action
	out := []sentence{say("Each attempt may take ", timeoutWords(a), "; past it, its context is cancelled and the attempt fails.")}
	out = append(out, retryWords(a.RetryPolicy, "A failed attempt")...)
	if (a.Type == action.HTTP || a.Type == action.HTTPS) && a.RetryPolicy.Retries() > 0 {
		out = append(out, say("A 429 or 503 answer's Retry-After delays the next retry until the time it names, by at most ",
			retry.Duration(scheduler.MaxRetryAfter), "."))
	}
	ea := a.ErrorAction
	if ea == nil {
		return append(out, say("When the last attempt fails, the occurrence faults; the job has no errorAction."))
	}
	s := fmt.Sprintf("When the last attempt fails, the occurrence faults and its errorAction runs: %s %s", ea.Type, target(ea))
	if scheduler.CarriesFailure(ea) {
		s += ", carrying the failure document (the job, the occurrence and each of its attempts, as JSON), since it has no body or message of its own"
	}
	out = append(out, say(s+". Each of its attempts may take ", timeoutWords(ea), "."))
	policy := ea.RetryPolicy
	if policy == nil {
		policy = a.RetryPolicy
	}
	return append(out, retryWords(policy, "A failed attempt of the errorAction")...)
}

// runPolicyWords says in sentences what the job's own run policy does
// with occurrences that cannot run on time; none when it sets none.
func runPolicyWords(job *scheduler.Job) []sentence {
	p := job.RunPolicy
	if p == nil {
		return nil
	}
	var out []sentence
	switch p.Missed {
	case scheduler.MissedSkip:
		out = append(out, say("Occurrences missed while it could not run (downtime, the job or its collection disabled) are skipped (missed Skip)."))
	case scheduler.MissedRunAll:
		out = append(out, say("Occurrences missed while it could not run (downtime, the job or its collection disabled) each run, one after the other (missed RunAll)."))
	case scheduler.MissedRunOnce:
		out = append(out, say("Occurrences missed while it could not run (downtime, the job or its collection disabled) run once for all of them (missed RunOnce)."))
	}
	if p.CatchUpWindow != 0 {
		out = append(out, say("An occurrence found later than ", p.CatchUpWindow, " after its expected time is skipped (catchUpWindow)."))
	}
	if p.Overlap != "" {
		out = append(out, say("An occurrence that comes due while the previous one is in progress: overlap "+string(p.Overlap)+"."))
	}
	if p.PauseAfterFaults != 0 {
		out = append(out, say(fmt.Sprintf("The job is disabled after %d consecutive faulted occurrences (pauseAfterFaults).", p.PauseAfterFaults)))
	}
	return out
}

// limitWords says in sentences which of its collection's limits apply to
// job, and toward which target; none when there are none.
func limitWords(job *scheduler.Job, limits []scheduler.Limit) []string {
	if len(limits) == 0 {
		return nil
	}
	var out []string
	for _, l := range limits {
		s := capital(l.String())
		switch l.Key {
		case scheduler.LimitHost:
			s += ": its attempts count toward " + scheduler.LimitTarget(&job.Action)
			if ea := job.Action.ErrorAction; ea != nil && scheduler.LimitTarget(ea) != scheduler.LimitTarget(&job.Action) {
				s += ", its errorAction's toward " + scheduler.LimitTarget(ea)
			}
		case scheduler.LimitJob:
			s += ": this job's attempts count on their own"
		default:
			s += ": this job's attempts count with those of every job of the collection"
		}
		out = append(out, s+" (the collection's "+string(l.Key)+" limit).")
	}
	return append(out, "An attempt that finds no free permit waits for one, its occurrence in progress; retries and the errorAction take permits too.")
}

// limitList says the collection's limits in words.
func limitList(limits []scheduler.Limit) []string {
	var out []string
	for _, l := range limits {
		out = append(out, capital(l.String())+".")
	}
	return out
}

// capital returns s with its first letter in upper case (ASCII).
func capital(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// timeoutWords says how long an attempt of a may take.
func timeoutWords(a *action.Action) sentence {
	if a.Timeout > 0 {
		return say(a.Timeout, " (its own timeout)")
	}
	return say("the Scheduler's action timeout, ", retry.Duration(scheduler.DefaultActionTimeout),
		" unless the program that runs the Scheduler sets another (an action's own \"timeout\" sets its own)")
}

// retryWords says what retry policy p does with a failed attempt, what
// naming the attempt.
func retryWords(p *retry.Policy, what string) []sentence {
	n := p.Retries()
	if n == 0 {
		return []sentence{say(what + " is not retried.")}
	}
	times := strconv.Itoa(n) + " times"
	if n == 1 {
		times = "once"
	}
	var s sentence
	switch {
	case p == nil:
		s = say(what+" is retried "+times+", ", retry.Duration(retry.DefaultInterval), " after the previous attempt ended (the default policy).")
	case p.Type == retry.Exponential:
		lo, hi := p.Range(1)
		s = say(what+" is retried "+times+", waiting longer each time (Exponential: the first retry after ", retry.Duration(lo), " to ", retry.Duration(hi), ").")
	default:
		lo, _ := p.Range(1)
		s = say(what+" is retried "+times+", ", retry.Duration(lo), " after the previous attempt ended.")
	}
	out := []sentence{s}
	if p != nil && p.MaxRetryDuration > 0 {
		out = append(out, say("No retry starts later than ", p.MaxRetryDuration, " after the occurrence's expected time (maxRetryDuration)."))
	}
	if p != nil && len(p.PermanentStatusCodes) > 0 {
		codes := make([]string, len(p.PermanentStatusCodes))
		for i, c := range p.PermanentStatusCodes {
			codes[i] = strconv.Itoa(c)
		}
		out = append(out, say("An answer with status "+strings.Join(codes, ", ")+" is permanent: it is not retried and the occurrence faults at once."))
	}
	return out
}
