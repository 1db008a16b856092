package dashboard

import (
	"fmt"
	"strconv"
	"strings"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/retry"
)

// failureWords says in sentences how job handles failure: the attempts'
// timeout, the retry policy, Retry-After, and the errorAction.
func failureWords(job *scheduler.Job) []string {
	a := &job.Action
	out := []string{"Each attempt may take " + timeoutWords(a) + "; past it, its context is cancelled and the attempt fails."}
	out = append(out, retryWords(a.RetryPolicy, "A failed attempt")...)
	if a.Type == action.HTTP || a.Type == action.HTTPS {
		out = append(out, fmt.Sprintf("A 429 or 503 answer's Retry-After delays the next retry until the time it names, by at most %s.",
			retry.Duration(scheduler.MaxRetryAfter)))
	}
	ea := a.ErrorAction
	if ea == nil {
		return append(out, "When the last attempt fails, the occurrence faults; the job has no errorAction.")
	}
	s := fmt.Sprintf("When the last attempt fails, the occurrence faults and its errorAction runs: %s %s", ea.Type, target(ea))
	if scheduler.CarriesFailure(ea) {
		s += ", carrying the failure document (the job, the occurrence and each of its attempts, as JSON), since it has no body or message of its own"
	}
	out = append(out, s+". Each of its attempts may take "+timeoutWords(ea)+".")
	policy := ea.RetryPolicy
	if policy == nil {
		policy = a.RetryPolicy
	}
	return append(out, retryWords(policy, "A failed attempt of the errorAction")...)
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
func timeoutWords(a *action.Action) string {
	if a.Timeout > 0 {
		return a.Timeout.String() + " (its own timeout)"
	}
	return fmt.Sprintf("the Scheduler's action timeout (Config.ActionTimeout, %s by default)", retry.Duration(scheduler.DefaultActionTimeout))
}

// retryWords says what retry policy p does with a failed attempt, what
// naming the attempt.
func retryWords(p *retry.Policy, what string) []string {
	n := p.Retries()
	if n == 0 {
		return []string{what + " is not retried."}
	}
	times := strconv.Itoa(n) + " times"
	if n == 1 {
		times = "once"
	}
	var s string
	switch {
	case p == nil:
		s = fmt.Sprintf("%s is retried %s, %s after the previous attempt ended (the default policy)", what, times, retry.Duration(retry.DefaultInterval))
	case p.Type == retry.Exponential:
		lo, hi := p.Range(1)
		s = fmt.Sprintf("%s is retried %s, waiting longer each time (Exponential: the first retry after %s to %s)", what, times, retry.Duration(lo), retry.Duration(hi))
	default:
		lo, _ := p.Range(1)
		s = fmt.Sprintf("%s is retried %s, %s after the previous attempt ended", what, times, retry.Duration(lo))
	}
	out := []string{s + "."}
	if p != nil && p.MaxRetryDuration > 0 {
		out = append(out, fmt.Sprintf("No retry starts later than %s after the occurrence's expected time (maxRetryDuration).", p.MaxRetryDuration))
	}
	if p != nil && len(p.PermanentStatusCodes) > 0 {
		codes := make([]string, len(p.PermanentStatusCodes))
		for i, c := range p.PermanentStatusCodes {
			codes[i] = strconv.Itoa(c)
		}
		out = append(out, "An answer with status "+strings.Join(codes, ", ")+" is permanent: it is not retried and the occurrence faults at once.")
	}
	return out
}
