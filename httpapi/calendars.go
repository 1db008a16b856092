package httpapi

import (
	"net/http"

	scheduler "github.com/jobclock/scheduler"
)

// TypeCalendar is the resource type of an exclusion calendar, an
// extension beyond Azure Scheduler.
const TypeCalendar = "Microsoft.Scheduler/jobCollections/calendars"

// CalendarDefinition is the resource of an exclusion calendar of a job
// collection (an extension beyond Azure Scheduler).
type CalendarDefinition struct {
	ID         string                       `json:"id"`
	Type       string                       `json:"type"`
	Name       string                       `json:"name"`
	Properties scheduler.CalendarProperties `json:"properties"`
	// ETag is the calendar's entity tag, from the ETag response header.
	ETag string `json:"-"`
}

// CalendarListResult is the list of a collection's calendars, ordered by
// name (on one page).
type CalendarListResult struct {
	Value []CalendarDefinition `json:"value"`
}

// calendarID is collectionID() + "/calendars/" + name.
func (s scope) calendarID(name string) string { return s.collectionID() + "/calendars/" + name }

// calendarResource builds the response body of a calendar.
func calendarResource(sc scope, r *scheduler.CalendarRecord) CalendarDefinition {
	return CalendarDefinition{ID: sc.calendarID(r.Name), Type: TypeCalendar, Name: r.Name,
		Properties: r.Calendar.Properties, ETag: r.ETag}
}

func (h *handler) putCalendar(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	data, err := h.body(w, r)
	if err != nil {
		return err
	}
	if err := sameResource(data, "calendar", rq.sc.calendarID(rq.calendar), rq.calendar); err != nil {
		return err
	}
	createOnly, err := ifNoneMatch(r)
	if err != nil {
		return err
	}
	def, err := scheduler.ParseCalendar(data)
	if err != nil {
		return validationError(err, "")
	}
	opts := &scheduler.PutCalendarOptions{IfMatch: ifMatch(r)}
	if createOnly {
		opts.IfNoneMatch = "*"
	}
	c, err := h.s.PutCalendar(r.Context(), rq.sc.key(), rq.calendar, def, opts)
	if createOnly {
		if err := createOnlyFailed("calendar '"+rq.calendar+"'", opts.IfMatch, err, h.calendarExists(r, rq)); err != nil {
			return err
		}
	}
	if err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	status := http.StatusOK
	if c.Created {
		status = http.StatusCreated
	}
	setETag(w, c.ETag)
	writeJSON(w, status, calendarResource(rq.sc, c))
	return nil
}

func (h *handler) getCalendar(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	c, err := h.s.GetCalendar(r.Context(), rq.sc.key(), rq.calendar)
	if err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	setETag(w, c.ETag)
	writeJSON(w, http.StatusOK, calendarResource(rq.sc, c))
	return nil
}

func (h *handler) listCalendars(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	all, err := h.s.ListCalendars(r.Context(), rq.sc.key())
	if err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	out := CalendarListResult{Value: []CalendarDefinition{}}
	for _, c := range all {
		out.Value = append(out.Value, calendarResource(rq.sc, c))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *handler) deleteCalendar(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	if err := h.noneMatchRefused(r, rq, "calendar '"+rq.calendar+"'", h.calendarExists(r, rq)); err != nil {
		return err
	}
	if err := h.s.DeleteCalendar(r.Context(), rq.sc.key(), rq.calendar, &scheduler.DeleteCalendarOptions{IfMatch: ifMatch(r)}); err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	writeEmpty(w, http.StatusOK)
	return nil
}
