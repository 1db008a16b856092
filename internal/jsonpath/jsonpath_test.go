package jsonpath

import "testing"

func TestJoin(t *testing.T) {
	tests := []struct{ base, rel, want string }{
		{"", "a.b", "a.b"},
		{"jobs.a", "", "jobs.a"},
		{"jobs.a", "action.type", "jobs.a.action.type"},
		{"recurrence.schedule.hours", "[1]", "recurrence.schedule.hours[1]"},
		{"headers", `["X-A"]`, `headers["X-A"]`},
	}
	for _, tt := range tests {
		if got := Join(tt.base, tt.rel); got != tt.want {
			t.Errorf("Join(%q, %q) = %q, want %q", tt.base, tt.rel, got, tt.want)
		}
	}
}

func TestReplace(t *testing.T) {
	tests := []struct{ text, path, with, want string }{
		{"repeats schedule.hours[0]", "schedule.hours[0]", "recurrence.schedule.hours[0]", "repeats recurrence.schedule.hours[0]"},
		{"put them in action.request.authentication (type Basic)", "action.request.authentication", "jobs.a.action.request.authentication",
			"put them in jobs.a.action.request.authentication (type Basic)"},
		// Not the end of a longer path, nor the start of one.
		{"repeats recurrence.schedule.hours[0]", "schedule.hours[0]", "x", "repeats recurrence.schedule.hours[0]"},
		{"repeats schedule.hours[0]", "schedule.hours", "x", "repeats schedule.hours[0]"},
		{"it belongs in properties.recurrence", "properties", "x", "it belongs in properties.recurrence"},
		{"it belongs in propertiesX", "properties", "x", "it belongs in propertiesX"},
		// A full stop that ends a sentence ends the path.
		{"it belongs in properties. Or not", "properties", "jobs.a.properties", "it belongs in jobs.a.properties. Or not"},
		{"it belongs in properties", "properties", "jobs.a.properties", "it belongs in jobs.a.properties"},
		{"a or a", "a", "b", "b or b"},
		{"nothing here", "", "x", "nothing here"},
	}
	for _, tt := range tests {
		if got := Replace(tt.text, tt.path, tt.with); got != tt.want {
			t.Errorf("Replace(%q, %q, %q) = %q, want %q", tt.text, tt.path, tt.with, got, tt.want)
		}
	}
}
