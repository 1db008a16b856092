package dashboard

import (
	"fmt"
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
