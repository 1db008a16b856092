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
