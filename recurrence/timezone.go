package recurrence

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// windowsZones maps the Windows time zone names that Logic Apps and .NET use
// to the IANA zone of the same region (the "001" territory of the Unicode
// CLDR windowsZones table). Keys are lower case; lookups ignore case.
var windowsZones = map[string]string{
	"dateline standard time":          "Etc/GMT+12",
	"utc-11":                          "Etc/GMT+11",
	"hawaiian standard time":          "Pacific/Honolulu",
	"alaskan standard time":           "America/Anchorage",
	"pacific standard time":           "America/Los_Angeles",
	"pacific standard time (mexico)":  "America/Tijuana",
	"us mountain standard time":       "America/Phoenix",
	"mountain standard time":          "America/Denver",
	"mountain standard time (mexico)": "America/Mazatlan",
	"central america standard time":   "America/Guatemala",
	"central standard time":           "America/Chicago",
	"central standard time (mexico)":  "America/Mexico_City",
	"canada central standard time":    "America/Regina",
	"sa pacific standard time":        "America/Bogota",
	"eastern standard time":           "America/New_York",
	"us eastern standard time":        "America/Indiana/Indianapolis",
	"venezuela standard time":         "America/Caracas",
	"atlantic standard time":          "America/Halifax",
	"sa western standard time":        "America/La_Paz",
	"newfoundland standard time":      "America/St_Johns",
	"e. south america standard time":  "America/Sao_Paulo",
	"argentina standard time":         "America/Argentina/Buenos_Aires",
	"sa eastern standard time":        "America/Cayenne",
	"utc-02":                          "Etc/GMT+2",
	"azores standard time":            "Atlantic/Azores",
	"cape verde standard time":        "Atlantic/Cape_Verde",
	"utc":                             "UTC",
	"gmt standard time":               "Europe/London",
	"greenwich standard time":         "Atlantic/Reykjavik",
	"morocco standard time":           "Africa/Casablanca",
	"w. europe standard time":         "Europe/Berlin",
	"central europe standard time":    "Europe/Budapest",
	"romance standard time":           "Europe/Paris",
	"central european standard time":  "Europe/Warsaw",
	"w. central africa standard time": "Africa/Lagos",
	"gtb standard time":               "Europe/Bucharest",
	"e. europe standard time":         "Europe/Chisinau",
	"fle standard time":               "Europe/Kiev",
	"egypt standard time":             "Africa/Cairo",
	"south africa standard time":      "Africa/Johannesburg",
	"israel standard time":            "Asia/Jerusalem",
	"jordan standard time":            "Asia/Amman",
	"turkey standard time":            "Europe/Istanbul",
	"arabic standard time":            "Asia/Baghdad",
	"arab standard time":              "Asia/Riyadh",
	"russian standard time":           "Europe/Moscow",
	"e. africa standard time":         "Africa/Nairobi",
	"iran standard time":              "Asia/Tehran",
	"arabian standard time":           "Asia/Dubai",
	"georgian standard time":          "Asia/Tbilisi",
	"afghanistan standard time":       "Asia/Kabul",
	"ekaterinburg standard time":      "Asia/Yekaterinburg",
	"pakistan standard time":          "Asia/Karachi",
	"west asia standard time":         "Asia/Tashkent",
	"india standard time":             "Asia/Kolkata",
	"sri lanka standard time":         "Asia/Colombo",
	"nepal standard time":             "Asia/Kathmandu",
	"central asia standard time":      "Asia/Almaty",
	"bangladesh standard time":        "Asia/Dhaka",
	"myanmar standard time":           "Asia/Yangon",
	"se asia standard time":           "Asia/Bangkok",
	"n. central asia standard time":   "Asia/Novosibirsk",
	"north asia standard time":        "Asia/Krasnoyarsk",
	"china standard time":             "Asia/Shanghai",
	"singapore standard time":         "Asia/Singapore",
	"w. australia standard time":      "Australia/Perth",
	"taipei standard time":            "Asia/Taipei",
	"ulaanbaatar standard time":       "Asia/Ulaanbaatar",
	"tokyo standard time":             "Asia/Tokyo",
	"korea standard time":             "Asia/Seoul",
	"yakutsk standard time":           "Asia/Yakutsk",
	"cen. australia standard time":    "Australia/Adelaide",
	"aus central standard time":       "Australia/Darwin",
	"e. australia standard time":      "Australia/Brisbane",
	"aus eastern standard time":       "Australia/Sydney",
	"west pacific standard time":      "Pacific/Port_Moresby",
	"tasmania standard time":          "Australia/Hobart",
	"vladivostok standard time":       "Asia/Vladivostok",
	"new zealand standard time":       "Pacific/Auckland",
	"utc+12":                          "Etc/GMT-12",
	"fiji standard time":              "Pacific/Fiji",
	"tonga standard time":             "Pacific/Tongatapu",
	"samoa standard time":             "Pacific/Apia",
}

var zoneCache sync.Map // name -> *time.Location

// LoadTimeZone returns the location a recurrence's timeZone names: an IANA
// name ("Europe/Paris"), one of the common Windows names
// ("W. Europe Standard Time", matched ignoring case), or the empty string,
// which means UTC. "Local" is rejected because it depends on the machine.
// IANA names are looked up with [time.LoadLocation], so the host needs zone
// data; programs that run where there is none can import time/tzdata.
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
		return nil, fmt.Errorf("recurrence: unknown time zone %q", name)
	}
	loc, err := time.LoadLocation(iana)
	if err != nil {
		return nil, fmt.Errorf("recurrence: unknown time zone %q", name)
	}
	zoneCache.Store(name, loc)
	return loc, nil
}
