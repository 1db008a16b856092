package codec

import (
	"fmt"
	"strings"
	"time"
)

// ParseTime parses an ISO 8601 date or date-time as job definitions write
// them: "2012-08-04T00:00Z" (seconds optional), "2012-08-04T00:00:00.123+02:00",
// offsets as "+02:00", "+0200" or "+02", and a bare date "2012-11-04"
// meaning midnight UTC. A date-time without an offset is UTC. The letters T
// and Z may be lower case. The ISO 8601 basic format ("20120804T000000Z")
// is not read: the error says so and gives the extended form, and names a
// date or time of day that does not exist ("February 2026 has no day 30").
func ParseTime(s string) (time.Time, error) {
	if t, ok := parseTimeUTC(s); ok {
		return t, nil
	}
	return parseTimeLayouts(s)
}

// parseTimeLayouts is ParseTime by way of time.Parse and its layouts.
func parseTimeLayouts(s string) (time.Time, error) {
	u := strings.ToUpper(s)
	// Each form matches one layout: try that one first, and the others
	// only when it fails, as a failed time.Parse costs an error value.
	if layout := timeLayoutOf(u); layout != "" {
		if t, err := time.Parse(layout, u); err == nil {
			return t, nil
		}
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, u); err == nil {
			return t, nil
		}
	}
	if reason := timeReason(s); reason != "" {
		return time.Time{}, fmt.Errorf("%q %s", s, reason)
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 time such as \"2012-08-04T00:00Z\" or \"2012-11-04\"", s)
}

// parseTimeUTC reads the forms most definitions use, "2012-08-04",
// "2012-08-04T00:00Z" and "2012-08-04T00:00:00Z", and the last with a
// fraction of 1 to 9 digits as the stores write it ("...:00.5Z") (T and Z
// in either case, Z optional after a time), as time.Parse reads them with the matching
// layout, without its general machinery. It returns false for anything
// else, including every value time.Parse would refuse.
func parseTimeUTC(s string) (time.Time, bool) {
	var hour, minute, second, nsec int
	switch {
	case len(s) == len("2006-01-02"):
	case len(s) >= len("2006-01-02T15:04") && (s[10] == 'T' || s[10] == 't'):
		rest := s[16:]
		if rest != "" && (rest[len(rest)-1] == 'Z' || rest[len(rest)-1] == 'z') {
			rest = rest[:len(rest)-1]
		}
		switch {
		case rest == "":
		case len(rest) >= len(":05") && rest[0] == ':':
			if second = twoDigits(rest[1:3]); second < 0 || second > 59 {
				return time.Time{}, false
			}
			// A fraction of 1 to 9 digits, as the stores write them.
			if frac := rest[3:]; frac != "" {
				if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
					return time.Time{}, false
				}
				for i := 1; i < 10; i++ {
					nsec *= 10
					if i < len(frac) {
						if frac[i] < '0' || frac[i] > '9' {
							return time.Time{}, false
						}
						nsec += int(frac[i] - '0')
					}
				}
			}
		default:
			return time.Time{}, false
		}
		hour, minute = twoDigits(s[11:13]), twoDigits(s[14:16])
		if s[13] != ':' || hour < 0 || hour > 23 || minute < 0 || minute > 59 {
			return time.Time{}, false
		}
	default:
		return time.Time{}, false
	}
	century, year := twoDigits(s[0:2]), twoDigits(s[2:4])
	month, day := twoDigits(s[5:7]), twoDigits(s[8:10])
	if century < 0 || year < 0 || s[4] != '-' || s[7] != '-' || month < 1 || month > 12 {
		return time.Time{}, false
	}
	year += century * 100
	if day < 1 || day > daysIn(time.Month(month), year) {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, second, nsec, time.UTC), true
}

// twoDigits returns the number two ASCII digits spell, or -1.
func twoDigits(s string) int {
	if s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return -1
	}
	return int(s[0]-'0')*10 + int(s[1]-'0')
}

// daysIn returns the number of days in month m of year.
func daysIn(m time.Month, year int) int {
	if m == time.February && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		return 29
	}
	return int(monthDays[m-1])
}

var monthDays = [12]uint8{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// timeLayoutOf returns the layout of timeLayouts that u has the shape of,
// or "" when it has none of their shapes.
func timeLayoutOf(u string) string {
	if len(u) == len("2006-01-02") {
		return timeLayouts[8]
	}
	if len(u) < len("2006-01-02T15:04") || u[10] != 'T' {
		return ""
	}
	rest, seconds := u[16:], false
	if rest != "" && rest[0] == ':' {
		// Seconds, and a fraction that the layouts with seconds accept.
		seconds = true
		i := 1
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.' || rest[i] == ',') {
			i++
		}
		rest = rest[i:]
	}
	var zone int // index into the layouts with seconds
	switch {
	case rest == "":
		zone = 6
	case rest == "Z" || len(rest) == len("+07:00"):
		zone = 0
	case len(rest) == len("+0700"):
		zone = 2
	case len(rest) == len("+07"):
		zone = 4
	default:
		return ""
	}
	if !seconds {
		zone++
	}
	return timeLayouts[zone]
}

var timeLayouts = []string{
	"2006-01-02T15:04:05Z07:00", // fractional seconds are accepted after the seconds
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15:04:05Z07",
	"2006-01-02T15:04Z07",
	"2006-01-02T15:04:05", // no offset: time.Parse gives UTC
	"2006-01-02T15:04",
	"2006-01-02",
}

// timeReason says why s, which ParseTime refuses, is not a time, when it
// can say more than which forms are accepted: s is in the ISO 8601 basic
// format ("20260804T000000Z"), and the reason gives its extended form to
// use instead, or names a date or time of day that does not exist
// ("2026-02-30"). It returns "" otherwise.
func timeReason(s string) string {
	if ext, ok := extendedForm(s); ok {
		if _, err := ParseTime(ext); err != nil {
			// Not a time in either format: say why.
			if reason := timeReason(ext); reason != "" {
				return "is in the ISO 8601 basic format, which is not accepted, and " + strings.TrimPrefix(reason, "is ")
			}
			return ""
		}
		return fmt.Sprintf("is in the ISO 8601 basic format, which is not accepted; use the extended form %q", ext)
	}
	if len(s) >= len("2006-01-02") && s[4] == '-' && s[7] == '-' {
		century, year := twoDigits(s[0:2]), twoDigits(s[2:4])
		month, day := twoDigits(s[5:7]), twoDigits(s[8:10])
		if century >= 0 && year >= 0 && month >= 0 && day >= 0 && (len(s) == 10 || s[10] == 'T' || s[10] == 't') {
			year += century * 100
			switch {
			case month < 1 || month > 12:
				return fmt.Sprintf("is not a date: there is no month %d", month)
			case day < 1 || day > daysIn(time.Month(month), year):
				return fmt.Sprintf("is not a date: %s %d has no day %d", time.Month(month), year, day)
			}
			if len(s) >= len("2006-01-02T15:04") && s[13] == ':' {
				hour, minute := twoDigits(s[11:13]), twoDigits(s[14:16])
				switch {
				case hour > 23:
					return fmt.Sprintf("is not a time: there is no hour %d (00-23)", hour)
				case minute > 59:
					return fmt.Sprintf("is not a time: there is no minute %d (00-59)", minute)
				}
			}
		}
	}
	return ""
}

// extendedForm returns s, a date or date-time in the ISO 8601 basic
// format ("20260804", "20260804T0000Z", "20260804T000000.5+0200"), in the
// extended format ParseTime reads ("2026-08-04T00:00:00.5+02:00"); false
// when s is not in the basic format.
func extendedForm(s string) (string, bool) {
	digits := func(s string, n int) bool {
		if len(s) < n {
			return false
		}
		for i := range n {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	}
	if !digits(s, 8) {
		return "", false
	}
	b := []byte(s[0:4] + "-" + s[4:6] + "-" + s[6:8])
	rest := s[8:]
	if rest == "" {
		return string(b), true
	}
	if rest[0] != 'T' && rest[0] != 't' || !digits(rest[1:], 4) {
		return "", false
	}
	b = append(b, "T"+rest[1:3]+":"+rest[3:5]...)
	rest = rest[5:]
	if digits(rest, 2) {
		b = append(b, ":"+rest[:2]...)
		rest = rest[2:]
		if len(rest) > 1 && (rest[0] == '.' || rest[0] == ',') {
			i := 1
			for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
				i++
			}
			if i == 1 {
				return "", false
			}
			b = append(b, "."+rest[1:i]...)
			rest = rest[i:]
		}
	}
	switch {
	case rest == "":
	case rest == "Z" || rest == "z":
		b = append(b, 'Z')
	case (rest[0] == '+' || rest[0] == '-') && (len(rest) == 3 || len(rest) == 5) && digits(rest[1:], len(rest)-1):
		b = append(b, rest[:3]...)
		if len(rest) == 5 {
			b = append(b, ":"+rest[3:5]...)
		} else {
			b = append(b, ":00"...)
		}
	default:
		return "", false
	}
	return string(b), true
}
