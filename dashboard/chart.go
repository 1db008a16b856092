package dashboard

import (
	"fmt"
	"html/template"
	"strconv"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// chart is a bar chart of occurrences and failed attempts per bucket of
// time, drawn as inline SVG by the overview template.
type chart struct {
	Title  string
	Step   string // "minute", "30 minutes"
	W, H   int
	LabelY int
	Bars   []chartBar
	Grid   []chartLine
	Labels []chartLabel
	Totals chartTotals
}

type chartBar struct {
	OccX, FailX, BarW float64
	OccY, OccH        float64
	FailY, FailH      float64
	Faulted           bool
	MarkX, MarkY      float64
	Title             string
}

type chartLine struct {
	Y     float64
	Label string
}

type chartLabel struct {
	X     float64
	Label string
}

// chartTotals sums a chart's buckets.
type chartTotals struct {
	Occurrences, Attempts, Failed, Faulted, Postponed, Skipped, ErrorActions int
}

// bucket is what a chart shows of one bucket of time.
type bucket struct {
	chartTotals
}

// Geometry of the charts, in SVG user units.
const (
	chartW      = 640
	chartH      = 180
	chartLeft   = 40
	chartRight  = 6
	chartTop    = 12
	chartBottom = 24
)

// buildChart lays out n buckets of width step from from, counted by
// HistoryCounts: per bucket, the occurrences (first attempts of the main
// action) and the failed attempts of the main action, with a mark where an
// occurrence faulted.
func buildChart(title string, from time.Time, step time.Duration, n int, counts []scheduler.HistoryCount) chart {
	buckets := make([]bucket, n)
	var tot chartTotals
	for _, c := range counts {
		i := int(c.Start.Sub(from) / step)
		if i < 0 || i >= n {
			continue
		}
		b := &buckets[i].chartTotals
		switch {
		case c.Status == scheduler.StatusPostponed:
			b.Postponed += c.Entries
		case c.Status == scheduler.StatusSkipped:
			b.Skipped += c.Entries
		case c.ActionName == scheduler.ErrorAction:
			b.ErrorActions += c.Entries
		default:
			b.Occurrences += c.Entries - c.Retries
			b.Attempts += c.Entries
			if c.Status == scheduler.StatusFailed {
				b.Failed += c.Entries
			}
		}
		b.Faulted += c.Faulted
	}
	top := 1
	for _, b := range buckets {
		top = max(top, b.Occurrences, b.Failed)
		tot.Occurrences += b.Occurrences
		tot.Attempts += b.Attempts
		tot.Failed += b.Failed
		tot.Faulted += b.Faulted
		tot.Postponed += b.Postponed
		tot.Skipped += b.Skipped
		tot.ErrorActions += b.ErrorActions
	}
	top = niceCeil(top)
	ch := chart{Title: title, Step: stepWords(step), W: chartW, H: chartH, LabelY: chartH - 4, Totals: tot}
	plotW := float64(chartW - chartLeft - chartRight)
	plotH := float64(chartH - chartTop - chartBottom)
	slot := plotW / float64(n)
	barW := max(1, slot*0.4)
	y := func(v int) float64 { return chartTop + plotH - plotH*float64(v)/float64(top) }
	lines := []int{0, top}
	if top%2 == 0 {
		lines = []int{0, top / 2, top}
	}
	for _, v := range lines {
		ch.Grid = append(ch.Grid, chartLine{Y: round1(y(v)), Label: itoa(v)})
	}
	every := n / 6
	layout := "15:04"
	for i, b := range buckets {
		x := chartLeft + slot*float64(i)
		start := from.Add(time.Duration(i) * step).UTC()
		bar := chartBar{
			OccX: round1(x + slot*0.1), FailX: round1(x + slot*0.1 + barW), BarW: round1(barW),
			OccY: round1(y(b.Occurrences)), OccH: round1(plotH * float64(b.Occurrences) / float64(top)),
			FailY: round1(y(b.Failed)), FailH: round1(plotH * float64(b.Failed) / float64(top)),
			Faulted: b.Faulted > 0,
			Title: fmt.Sprintf("%s–%s UTC: %d %s, %d %s, %d failed, %d %s, %d postponed, %d %s, %d %s",
				start.Format(layout), start.Add(step).Format(layout), b.Occurrences, plural(b.Occurrences, "occurrence", "occurrences"),
				b.Attempts, plural(b.Attempts, "attempt", "attempts"), b.Failed, b.Faulted, plural(b.Faulted, "faulted occurrence", "faulted occurrences"),
				b.Postponed, b.Skipped, plural(b.Skipped, "skipped entry", "skipped entries"), b.ErrorActions, plural(b.ErrorActions, "error action attempt", "error action attempts")),
		}
		if bar.Faulted {
			bar.MarkX, bar.MarkY = round1(bar.FailX+barW/2), round1(bar.FailY-4)
		}
		ch.Bars = append(ch.Bars, bar)
		if every > 0 && i%every == 0 {
			ch.Labels = append(ch.Labels, chartLabel{X: round1(x), Label: start.Format(layout)})
		}
	}
	return ch
}

// stepWords says a bucket's width: "minute", "30 minutes", "hour".
func stepWords(d time.Duration) string {
	switch {
	case d == time.Minute:
		return "minute"
	case d == time.Hour:
		return "hour"
	case d%time.Hour == 0:
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}

// niceCeil rounds n up to 1, 2 or 5 times a power of ten, so that the
// axis reads well.
func niceCeil(n int) int {
	p := 1
	for {
		for _, m := range []int{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
		p *= 10
	}
}

func round1(f float64) float64 { return float64(int(f*10+0.5)) / 10 }

// durationChart plots a job's history entries over time: one dot per
// attempt at its end time, as high as it took, coloured by its status, a
// ring where it faulted its occurrence. Drawn as inline SVG, from the
// entries of the history table, so it costs the page no store call; the
// SVG is written here rather than by the template, whose per-element work
// would make the job page markedly slower (a page has up to 50 dots).
type durationChart struct {
	W, H int
	// SVG is the chart's content: grid, axis labels and dots.
	SVG template.HTML
	// Counts per status, in the order of the legend.
	Counts []statusCount
}

type statusCount struct {
	Status string
	N      int
}

// durationLeft is the left margin of the duration chart: room for its
// axis labels ("500ms", "2.5s").
const durationLeft = 52

// buildDurationChart lays out the entries (newest first, as history
// lists them); nil when there are fewer than two with a duration.
func buildDurationChart(entries []scheduler.HistoryEntry) *durationChart {
	var from, to time.Time
	var longest time.Duration
	n := 0
	for _, e := range entries {
		if e.StartTime.IsZero() || e.Status == scheduler.StatusPostponed || e.Status == scheduler.StatusSkipped {
			continue
		}
		if n == 0 || e.EndTime.Before(from) {
			from = e.EndTime
		}
		if n == 0 || e.EndTime.After(to) {
			to = e.EndTime
		}
		longest = max(longest, e.EndTime.Sub(e.StartTime))
		n++
	}
	if n < 2 {
		return nil
	}
	// The axis counts milliseconds, rounded up to 1, 2 or 5 of a power of ten.
	top := niceCeil(max(1, int((longest+time.Millisecond-1)/time.Millisecond)))
	span := max(to.Sub(from), time.Second)
	const left, right = durationLeft, chartW - chartRight
	plotW := float64(right - left - 8)
	plotH := float64(chartH - chartTop - chartBottom)
	x := func(t time.Time) float64 { return left + 4 + plotW*float64(t.Sub(from))/float64(span) }
	y := func(ms float64) float64 { return chartTop + plotH - plotH*ms/float64(top) }
	b := make([]byte, 0, 1024+24*n)
	for _, v := range []int{0, top / 2, top} {
		if v == top/2 && top%2 != 0 {
			continue
		}
		gy := round1(y(float64(v)))
		b = append(b, `<line class="grid" x1="`...)
		b = strconv.AppendInt(b, left, 10)
		b = append(b, `" x2="`...)
		b = strconv.AppendInt(b, right, 10)
		b = append(b, `" y1="`...)
		b = strconv.AppendFloat(b, gy, 'f', -1, 64)
		b = append(b, `" y2="`...)
		b = strconv.AppendFloat(b, gy, 'f', -1, 64)
		b = append(b, `"></line><text class="axis" x="`...)
		b = strconv.AppendInt(b, left-6, 10)
		b = append(b, `" y="`...)
		b = strconv.AppendFloat(b, gy, 'f', -1, 64)
		b = append(b, `" text-anchor="end" dominant-baseline="middle">`...)
		b = appendMs(b, v, top)
		b = append(b, "</text>"...)
	}
	// Four labels a third of the span apart, to the minute, or to the
	// second when a third is shorter than a minute; one that reads as the
	// one before it is left out.
	layout := "15:04"
	switch {
	case span > 24*time.Hour:
		layout = "01-02 15:04"
	case span/3 < time.Minute:
		layout = "15:04:05"
	}
	last := ""
	for i := range 4 {
		t := from.Add(span * time.Duration(i) / 3).UTC()
		if label := t.Format(layout); label == last {
			continue
		} else {
			last = label
		}
		b = append(b, `<text class="axis" x="`...)
		b = strconv.AppendFloat(b, round1(min(x(t), chartW-90)), 'f', -1, 64)
		b = append(b, `" y="`...)
		b = strconv.AppendInt(b, chartH-4, 10)
		b = append(b, `">`...)
		b = t.AppendFormat(b, layout)
		b = append(b, "</text>"...)
	}
	// The dots of each status are one path of zero-length segments with
	// round caps, and the rings of faulted ones a wider path beneath: a
	// few bytes per attempt (the history table below says the rest). The
	// errorAction's attempts are dots of their own, whatever their
	// outcome: its success is not the job's.
	counts := map[scheduler.ExecutionStatus]int{}
	var rings []byte
	dots := map[scheduler.ExecutionStatus][]byte{}
	for _, e := range entries {
		if e.StartTime.IsZero() || e.Status == scheduler.StatusPostponed || e.Status == scheduler.StatusSkipped {
			continue
		}
		key := e.Status
		if e.ActionName == scheduler.ErrorAction {
			key = errorActionDots
		}
		counts[key]++
		d := e.EndTime.Sub(e.StartTime)
		cx, cy := round1(x(e.EndTime)), round1(y(float64(d)/float64(time.Millisecond)))
		dots[key] = appendDot(dots[key], cx, cy)
		if e.Faulted {
			rings = appendDot(rings, cx, cy)
		}
	}
	if len(rings) > 0 {
		b = append(b, `<path class="rings" d="`...)
		b = append(b, rings...)
		b = append(b, `"></path>`...)
	}
	for _, st := range []scheduler.ExecutionStatus{scheduler.StatusCompleted, scheduler.StatusFailed, errorActionDots} {
		if len(dots[st]) > 0 {
			b = append(b, `<path class="dots dot-`...)
			b = append(b, st...)
			b = append(b, `" d="`...)
			b = append(b, dots[st]...)
			b = append(b, `"></path>`...)
		}
	}
	ch := &durationChart{W: chartW, H: chartH, SVG: template.HTML(b)}
	for _, st := range []scheduler.ExecutionStatus{scheduler.StatusCompleted, scheduler.StatusFailed} {
		if k := counts[st]; k > 0 {
			ch.Counts = append(ch.Counts, statusCount{string(st), k})
		}
	}
	if k := counts[errorActionDots]; k > 0 {
		ch.Counts = append(ch.Counts, statusCount{plural(k, "errorAction attempt", "errorAction attempts"), k})
	}
	return ch
}

// errorActionDots is the key of the errorAction's attempts among the
// duration chart's statuses, and the end of their dots' class.
const errorActionDots scheduler.ExecutionStatus = "ErrorAction"

// appendMs writes a number of milliseconds as the axis shows it: "500ms",
// or in seconds ("2.5s") on an axis that reaches a second.
func appendMs(b []byte, ms, top int) []byte {
	if top >= 1000 {
		return append(strconv.AppendFloat(b, float64(ms)/1000, 'f', -1, 64), 's')
	}
	return append(strconv.AppendInt(b, int64(ms), 10), "ms"...)
}

// appendDot adds a dot at (x, y) to a path: a move and a zero-length
// line, which a round cap draws as a dot.
func appendDot(b []byte, x, y float64) []byte {
	b = append(b, 'M')
	b = strconv.AppendFloat(b, x, 'f', -1, 64)
	b = append(b, ' ')
	b = strconv.AppendFloat(b, y, 'f', -1, 64)
	return append(b, "h0"...)
}
