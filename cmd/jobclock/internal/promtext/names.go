package promtext

import (
	"slices"
	"strings"
)

// units are the Prometheus words for the UCUM units OpenTelemetry
// instruments use; a unit not listed is written as it is.
var units = map[string]string{
	"d": "days", "h": "hours", "min": "minutes", "s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds",
	"By": "bytes", "KiBy": "kibibytes", "MiBy": "mebibytes", "GiBy": "gibibytes", "TiBy": "tibibytes",
	"KBy": "kilobytes", "MBy": "megabytes", "GBy": "gigabytes", "TBy": "terabytes",
	"m": "meters", "V": "volts", "A": "amperes", "J": "joules", "W": "watts", "g": "grams",
	"Cel": "celsius", "Hz": "hertz", "1": "", "%": "percent",
}

// perUnits are the words for the denominator of a unit such as "By/s".
var perUnits = map[string]string{"s": "second", "m": "minute", "h": "hour", "d": "day", "w": "week", "mo": "month", "y": "year"}

// MetricName returns the Prometheus name of an OpenTelemetry metric of the
// given unit and type (counter, gauge or histogram; a counter is a
// monotonic sum): its words joined by underscores, then the unit's words
// unless the name has them already, then "total" for a counter and
// "ratio" for a gauge of unit "1". "jobclock.attempt.duration" in "s" is
// jobclock_attempt_duration_seconds; "jobclock.attempts" in "{attempt}",
// a counter, is jobclock_attempts_total.
func MetricName(name, unit, typ string) string {
	words := strings.FieldsFunc(name, func(r rune) bool { return !metricChar(r) })
	main, per := unitWords(unit)
	if main != "" && !slices.Contains(words, main) {
		words = append(words, main)
	}
	if per != "" {
		words = append(words, per)
	}
	if typ == "counter" {
		words = append(slices.DeleteFunc(words, func(w string) bool { return w == "total" }), "total")
	}
	if unit == "1" && typ == "gauge" {
		words = append(slices.DeleteFunc(words, func(w string) bool { return w == "ratio" }), "ratio")
	}
	out := strings.Join(words, "_")
	if out != "" && out[0] >= '0' && out[0] <= '9' {
		out = "_" + out
	}
	return out
}

// unitWords returns the words of a unit: "s" gives "seconds"; "By/s"
// gives "bytes" and "per_second"; an annotation in braces ("{attempt}")
// gives nothing.
func unitWords(unit string) (main, per string) {
	num, den, _ := strings.Cut(unit, "/")
	if num = strings.TrimSpace(num); num != "" && !strings.ContainsAny(num, "{}") {
		main = cleanUnit(lookup(units, num))
	}
	if den = strings.TrimSpace(den); den != "" && !strings.ContainsAny(den, "{}") {
		if w := strings.TrimSuffix(cleanUnit(lookup(perUnits, den)), "_"); w != "" {
			per = "per_" + w
		}
	}
	if per != "" {
		// As OpenTelemetry's translator does: "By./s" is By_per_second.
		main = strings.TrimSuffix(main, "_")
	}
	return main, per
}

func lookup(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return k
}

// cleanUnit replaces what a metric name cannot hold with one underscore.
func cleanUnit(u string) string {
	return strings.TrimPrefix(sanitize(u, metricChar), "_")
}

// LabelName returns the Prometheus label name of an attribute: runs of
// characters outside [a-zA-Z0-9] become one underscore, a leading digit
// gets the prefix "key_", and a name in double underscores keeps them
// ("jobclock.action.type" is jobclock_action_type). It returns "" for a
// name of underscores only, which has no label.
func LabelName(key string) string {
	reserved := len(key) >= 4 && strings.HasPrefix(key, "__") && strings.HasSuffix(key, "__")
	if reserved {
		key = key[2 : len(key)-2]
	}
	name := sanitize(key, func(r rune) bool { return r != '_' && metricChar(r) && r != ':' })
	if reserved {
		name = "__" + name + "__"
	}
	if strings.Trim(name, "_") == "" {
		return ""
	}
	if name[0] >= '0' && name[0] <= '9' {
		name = "key_" + name
	}
	return name
}

// sanitize replaces each run of characters that valid rejects with one
// underscore.
func sanitize(s string, valid func(rune) bool) string {
	var b strings.Builder
	under := false
	for _, r := range s {
		if valid(r) {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	return b.String()
}

func metricChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ':'
}
