package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// Search finds jobs across the collections the viewer sees, by a part of
// their name, their state, their health and one of their tags. It reads the jobs of one
// collection after another in name order, a store page of searchBatch
// jobs at a time (the state and the tag filtered by the store, name and
// health here),
// and stops as soon as it has the page asked for and one more match: a
// page costs the reads up to its last match, so the first pages are cheap
// and a search with few matches reads every job once (at 10,000 jobs,
// 100 store reads of 100 jobs each; see BenchmarkSearch). Collections
// whose job counts (one JobCounts call) have none of the state asked for
// are not read at all.

// searchBatch is how many jobs a search reads from the store at a time:
// the most that ListJobs returns.
const searchBatch = 100

// jobFilter is what a search keeps of the jobs.
type jobFilter struct {
	Name   string // a part of the job's name, in any case; empty keeps all
	State  scheduler.JobState
	Health scheduler.JobHealth
	Tag    scheduler.TagFilter // the store filters it (ListJobsOptions.Tag)
}

// parseJobFilter reads the filter of a search's query string.
func parseJobFilter(q url.Values) (jobFilter, error) {
	f := jobFilter{Name: strings.TrimSpace(q.Get("name"))}
	var err error
	if f.State, err = parseState(q.Get("state")); err != nil {
		return f, err
	}
	if f.Tag, err = parseTagFilter(q.Get("tag")); err != nil {
		return f, err
	}
	if s := q.Get("health"); s != "" {
		for _, h := range scheduler.Healths {
			if strings.EqualFold(s, string(h)) {
				f.Health = h
			}
		}
		if f.Health == "" {
			names := make([]string, len(scheduler.Healths))
			for i, h := range scheduler.Healths {
				names[i] = string(h)
			}
			return f, &statusError{http.StatusBadRequest, fmt.Sprintf("health=%q is not a job health: use %s or %s, or leave it out.", s, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])}
		}
	}
	return f, nil
}

// parseTagFilter reads a search's tag parameter: a tag's name, which
// keeps the jobs that have the tag, or name=value, which keeps those whose
// tag has that value. Spaces around the name and the value are dropped.
func parseTagFilter(s string) (scheduler.TagFilter, error) {
	name, value, _ := strings.Cut(s, "=")
	t := scheduler.TagFilter{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)}
	if t.Name == "" && t.Value != "" {
		return t, &statusError{http.StatusBadRequest, fmt.Sprintf("tag=%q names no tag: give a tag's name, or name=value.", s)}
	}
	return t, nil
}

// TagText is the tag filter as the search form shows it: name or
// name=value; empty without one.
func (f jobFilter) TagText() string {
	if f.Tag.Value == "" {
		return f.Tag.Name
	}
	return f.Tag.Name + "=" + f.Tag.Value
}

// listOptions are the options of the store reads of a search: what the
// store filters itself.
func (f jobFilter) listOptions(skip int) *scheduler.ListJobsOptions {
	return &scheduler.ListJobsOptions{State: f.State, Tag: f.Tag, Top: searchBatch, Skip: skip}
}

// keeps reports whether a job the store returned matches the rest of the
// filter.
func (f jobFilter) keeps(j *scheduler.JobRecord) bool {
	return (f.Name == "" || strings.Contains(strings.ToLower(j.Name), strings.ToLower(f.Name))) &&
		(f.Health == "" || j.Status.Health == f.Health)
}

type searchPage struct {
	Filter   jobFilter
	Searched bool
	States   []string
	Healths  []string
	Rows     []searchRow
	Pager    pager
	Read     int // jobs read from the store for this page
}

type searchRow struct {
	jobRow
	Collection, CollectionURL string
}

func (h *handler) search(r *http.Request, v *viewer) (string, any, error) {
	ctx := r.Context()
	q := r.URL.Query()
	p := &searchPage{}
	for _, st := range jobStates {
		p.States = append(p.States, string(st))
	}
	for _, hl := range scheduler.Healths {
		p.Healths = append(p.Healths, string(hl))
	}
	var err error
	if p.Filter, err = parseJobFilter(q); err != nil {
		return "", nil, err
	}
	top, skip, err := parsePage(q)
	if err != nil {
		return "", nil, err
	}
	p.Searched = len(q) > 0
	if !p.Searched {
		return "search", p, nil
	}
	cols, _, err := h.visibleCollections(ctx, v)
	if err != nil {
		return "", nil, err
	}
	counts, err := h.s.JobCounts(ctx)
	if err != nil {
		return "", nil, err
	}
	has := map[string]int{}
	for _, c := range counts {
		if p.Filter.State == "" || c.State == p.Filter.State {
			has[c.Collection] += c.Jobs
		}
	}
	slices.SortFunc(cols, func(a, b *scheduler.CollectionRecord) int { return strings.Compare(a.Name, b.Name) })
	matches := 0
	now := time.Now()
scan:
	for _, c := range cols {
		if has[c.Name] == 0 {
			continue
		}
		for from := 0; ; from += searchBatch {
			jobs, err := h.s.ListJobs(ctx, c.Name, p.Filter.listOptions(from))
			if err != nil {
				return "", nil, err
			}
			p.Read += len(jobs)
			for _, j := range jobs {
				if !p.Filter.keeps(j) {
					continue
				}
				matches++
				if matches > skip && matches <= skip+top {
					row, err := h.jobRow(ctx, j, now, c.Definition.State())
					if err != nil {
						return "", nil, err
					}
					p.Rows = append(p.Rows, searchRow{jobRow: row, Collection: c.Name, CollectionURL: h.collectionURL(c.Name, nil)})
				}
				if matches > skip+top {
					break scan
				}
			}
			if len(jobs) < searchBatch {
				break
			}
		}
	}
	sameClock(p.Rows, func(r *searchRow) *stamp { return &r.Next }, func(r *searchRow) *stamp { return &r.LastRun })
	base := cloneQuery(q)
	p.Pager = h.pager(base, skip, top, max(0, min(matches-skip, top+1)), 0, false, func(q url.Values) string { return h.url(q, "search") })
	return "search", p, nil
}
