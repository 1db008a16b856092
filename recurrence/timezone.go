package recurrence

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/jobclock/scheduler/internal/suggest"
)

// windowsZones maps the Windows time zone names that Logic Apps, .NET and
// Outlook use to the IANA zone of the same region: every name of the
// Unicode CLDR windowsZones table with its "001" territory, ordered by
// that zone. Keys are lower case; lookups ignore case.
var windowsZones = map[string]string{
	"egypt standard time":             "Africa/Cairo",
	"morocco standard time":           "Africa/Casablanca",
	"south africa standard time":      "Africa/Johannesburg",
	"south sudan standard time":       "Africa/Juba",
	"sudan standard time":             "Africa/Khartoum",
	"w. central africa standard time": "Africa/Lagos",
	"e. africa standard time":         "Africa/Nairobi",
	"sao tome standard time":          "Africa/Sao_Tome",
	"libya standard time":             "Africa/Tripoli",
	"namibia standard time":           "Africa/Windhoek",
	"aleutian standard time":          "America/Adak",
	"alaskan standard time":           "America/Anchorage",
	"tocantins standard time":         "America/Araguaina",
	"paraguay standard time":          "America/Asuncion",
	"bahia standard time":             "America/Bahia",
	"sa pacific standard time":        "America/Bogota",
	"argentina standard time":         "America/Argentina/Buenos_Aires",
	"eastern standard time (mexico)":  "America/Cancun",
	"venezuela standard time":         "America/Caracas",
	"sa eastern standard time":        "America/Cayenne",
	"central standard time":           "America/Chicago",
	"central brazilian standard time": "America/Cuiaba",
	"mountain standard time":          "America/Denver",
	"greenland standard time":         "America/Nuuk",
	"turks and caicos standard time":  "America/Grand_Turk",
	"central america standard time":   "America/Guatemala",
	"atlantic standard time":          "America/Halifax",
	"cuba standard time":              "America/Havana",
	"us eastern standard time":        "America/Indiana/Indianapolis",
	"sa western standard time":        "America/La_Paz",
	"pacific standard time":           "America/Los_Angeles",
	"mountain standard time (mexico)": "America/Mazatlan",
	"central standard time (mexico)":  "America/Mexico_City",
	"saint pierre standard time":      "America/Miquelon",
	"montevideo standard time":        "America/Montevideo",
	"eastern standard time":           "America/New_York",
	"us mountain standard time":       "America/Phoenix",
	"haiti standard time":             "America/Port-au-Prince",
	"magallanes standard time":        "America/Punta_Arenas",
	"canada central standard time":    "America/Regina",
	"pacific sa standard time":        "America/Santiago",
	"e. south america standard time":  "America/Sao_Paulo",
	"newfoundland standard time":      "America/St_Johns",
	"pacific standard time (mexico)":  "America/Tijuana",
	"yukon standard time":             "America/Whitehorse",
	"jordan standard time":            "Asia/Amman",
	"arabic standard time":            "Asia/Baghdad",
	"azerbaijan standard time":        "Asia/Baku",
	"se asia standard time":           "Asia/Bangkok",
	"altai standard time":             "Asia/Barnaul",
	"middle east standard time":       "Asia/Beirut",
	"central asia standard time":      "Asia/Bishkek",
	"india standard time":             "Asia/Kolkata",
	"transbaikal standard time":       "Asia/Chita",
	"sri lanka standard time":         "Asia/Colombo",
	"syria standard time":             "Asia/Damascus",
	"bangladesh standard time":        "Asia/Dhaka",
	"arabian standard time":           "Asia/Dubai",
	"west bank standard time":         "Asia/Hebron",
	"w. mongolia standard time":       "Asia/Hovd",
	"north asia east standard time":   "Asia/Irkutsk",
	"israel standard time":            "Asia/Jerusalem",
	"afghanistan standard time":       "Asia/Kabul",
	"russia time zone 11":             "Asia/Kamchatka",
	"pakistan standard time":          "Asia/Karachi",
	"nepal standard time":             "Asia/Kathmandu",
	"north asia standard time":        "Asia/Krasnoyarsk",
	"magadan standard time":           "Asia/Magadan",
	"n. central asia standard time":   "Asia/Novosibirsk",
	"omsk standard time":              "Asia/Omsk",
	"north korea standard time":       "Asia/Pyongyang",
	"qyzylorda standard time":         "Asia/Qyzylorda",
	"myanmar standard time":           "Asia/Yangon",
	"arab standard time":              "Asia/Riyadh",
	"sakhalin standard time":          "Asia/Sakhalin",
	"korea standard time":             "Asia/Seoul",
	"china standard time":             "Asia/Shanghai",
	"singapore standard time":         "Asia/Singapore",
	"russia time zone 10":             "Asia/Srednekolymsk",
	"taipei standard time":            "Asia/Taipei",
	"west asia standard time":         "Asia/Tashkent",
	"georgian standard time":          "Asia/Tbilisi",
	"iran standard time":              "Asia/Tehran",
	"tokyo standard time":             "Asia/Tokyo",
	"tomsk standard time":             "Asia/Tomsk",
	"ulaanbaatar standard time":       "Asia/Ulaanbaatar",
	"vladivostok standard time":       "Asia/Vladivostok",
	"yakutsk standard time":           "Asia/Yakutsk",
	"ekaterinburg standard time":      "Asia/Yekaterinburg",
	"caucasus standard time":          "Asia/Yerevan",
	"azores standard time":            "Atlantic/Azores",
	"cape verde standard time":        "Atlantic/Cape_Verde",
	"greenwich standard time":         "Atlantic/Reykjavik",
	"cen. australia standard time":    "Australia/Adelaide",
	"e. australia standard time":      "Australia/Brisbane",
	"aus central standard time":       "Australia/Darwin",
	"aus central w. standard time":    "Australia/Eucla",
	"tasmania standard time":          "Australia/Hobart",
	"lord howe standard time":         "Australia/Lord_Howe",
	"w. australia standard time":      "Australia/Perth",
	"aus eastern standard time":       "Australia/Sydney",
	"utc-11":                          "Etc/GMT+11",
	"dateline standard time":          "Etc/GMT+12",
	"utc-02":                          "Etc/GMT+2",
	"utc-08":                          "Etc/GMT+8",
	"utc-09":                          "Etc/GMT+9",
	"utc+12":                          "Etc/GMT-12",
	"utc+13":                          "Etc/GMT-13",
	"utc":                             "UTC",
	"astrakhan standard time":         "Europe/Astrakhan",
	"w. europe standard time":         "Europe/Berlin",
	"gtb standard time":               "Europe/Bucharest",
	"central europe standard time":    "Europe/Budapest",
	"e. europe standard time":         "Europe/Chisinau",
	"turkey standard time":            "Europe/Istanbul",
	"kaliningrad standard time":       "Europe/Kaliningrad",
	"fle standard time":               "Europe/Kiev",
	"gmt standard time":               "Europe/London",
	"belarus standard time":           "Europe/Minsk",
	"russian standard time":           "Europe/Moscow",
	"romance standard time":           "Europe/Paris",
	"russia time zone 3":              "Europe/Samara",
	"saratov standard time":           "Europe/Saratov",
	"volgograd standard time":         "Europe/Volgograd",
	"central european standard time":  "Europe/Warsaw",
	"mauritius standard time":         "Indian/Mauritius",
	"samoa standard time":             "Pacific/Apia",
	"new zealand standard time":       "Pacific/Auckland",
	"bougainville standard time":      "Pacific/Bougainville",
	"chatham islands standard time":   "Pacific/Chatham",
	"easter island standard time":     "Pacific/Easter",
	"fiji standard time":              "Pacific/Fiji",
	"central pacific standard time":   "Pacific/Guadalcanal",
	"hawaiian standard time":          "Pacific/Honolulu",
	"line islands standard time":      "Pacific/Kiritimati",
	"marquesas standard time":         "Pacific/Marquesas",
	"norfolk standard time":           "Pacific/Norfolk",
	"west pacific standard time":      "Pacific/Port_Moresby",
	"tonga standard time":             "Pacific/Tongatapu",
}

var zoneCache sync.Map // name -> *time.Location

// LoadTimeZone returns the location a recurrence's timeZone names: an IANA
// name ("Europe/Paris"), a Windows name of CLDR's windowsZones table
// ("W. Europe Standard Time", matched ignoring case), or the empty string,
// which means UTC. "Local" is rejected because it depends on the machine.
// IANA names are looked up with [time.LoadLocation], so the host needs zone
// data; programs that run where there is none can import time/tzdata.
// IANA names are case-sensitive: the error for a name it does not know
// suggests the likely spelling ("europe/berlin": did you mean
// "Europe/Berlin"?), and so do validation and a cron spec's CRON_TZ.
func LoadTimeZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if l, ok := zoneCache.Load(name); ok {
		return l.(*time.Location), nil
	}
	iana := name
	if w, ok := windowsZones[strings.ToLower(name)]; ok {
		iana = w
	} else if name == "Local" || strings.ContainsAny(name, "\x00\\") || strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
		return nil, &UnknownTimeZoneError{Name: name}
	}
	loc, err := time.LoadLocation(iana)
	if err != nil {
		return nil, &UnknownTimeZoneError{Name: name, Suggestions: zoneSuggestions(name)}
	}
	zoneCache.Store(name, loc)
	return loc, nil
}

// UnknownTimeZoneError is the error of [LoadTimeZone] for a name it does
// not know. Every place that reads a zone name (a recurrence's or a
// calendar's timeZone, a cron spec's CRON_TZ, an iCalendar TZID, the
// command line) gives its Suggestions.
type UnknownTimeZoneError struct {
	// Name is the name as it was given.
	Name string
	// Suggestions are the names the user most likely meant: the IANA
	// name in its right case ("europe/berlin": "Europe/Berlin"), or else
	// the known names at most two edits from Name, without regard to
	// case. It is empty when no name is likely.
	Suggestions []string
}

func (e *UnknownTimeZoneError) Error() string {
	return fmt.Sprintf("recurrence: unknown time zone %q", e.Name) + e.DidYouMean()
}

// DidYouMean returns `, did you mean "Europe/Berlin"?` (or "A" or "B")
// for the error's suggestions, or "" when it has none: the end that
// messages naming a zone give a name they could not read.
func (e *UnknownTimeZoneError) DidYouMean() string {
	if len(e.Suggestions) == 0 {
		return ""
	}
	return ", did you mean " + suggest.Or(e.Suggestions, strconv.Quote) + "?"
}

// zoneHint returns the DidYouMean of err when it is an
// UnknownTimeZoneError, or "".
func zoneHint(err error) string {
	if u, ok := errors.AsType[*UnknownTimeZoneError](err); ok {
		return u.DidYouMean()
	}
	return ""
}

// zoneSuggestions returns the names likely meant by a zone name that
// LoadTimeZone does not know, or nil when it has none: IANA names are
// case-sensitive, so "europe/berlin" is suggested the name with each word
// capitalized when a zone has it, or a zone of the Windows table spelled
// as name is without regard to case (Etc/GMT+2, America/Port-au-Prince);
// otherwise the zones of that table close to name (see package suggest).
func zoneSuggestions(name string) []string {
	known := make([]string, 0, len(windowsZones))
	for _, iana := range windowsZones {
		if strings.EqualFold(iana, name) {
			return []string{iana}
		}
		known = append(known, iana)
	}
	if c := capitalizeWords(name); c != name && !strings.Contains(c, "..") && !strings.HasPrefix(c, "/") {
		if _, err := time.LoadLocation(c); err == nil {
			return []string{c}
		}
	}
	slices.Sort(known)
	return suggest.Closest(name, slices.Compact(known))
}

// capitalizeWords returns name with the first letter of each word (after
// the start, "/", "_" or "-") upper case and the others lower case.
func capitalizeWords(name string) string {
	b := []rune(strings.ToLower(name))
	for i, r := range b {
		if i == 0 || strings.ContainsRune("/_-", b[i-1]) {
			b[i] = unicode.ToUpper(r)
		}
	}
	return string(b)
}
