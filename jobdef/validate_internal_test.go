package jobdef

import (
	"math/rand/v2"
	"net/url"
	"testing"
)

// urlVerdict is what request validation reads from url.Parse: the scheme
// when the URI is an absolute http or https URL with a host, else "".
func urlVerdict(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Hostname() == "" {
		return ""
	}
	return u.Scheme
}

// TestPlainURLSchemeAgreesWithURLParse checks the shortcut that request
// validation takes for plain URLs: whatever it accepts, url.Parse accepts
// with the same scheme and a host.
func TestPlainURLSchemeAgreesWithURLParse(t *testing.T) {
	plain := []string{
		"http://contoso.com/foo",
		"https://contoso.com/notifyError",
		"http://contoso.com",
		"http://contoso.com:8080/a/b?x=1&y=2",
		"https://a-b.cd.example/~user/x_y.z",
		"http://127.0.0.1:80/",
		"http://h?q",
		"http://h/a//b/../c",
	}
	for _, uri := range plain {
		if got := plainURLScheme(uri); got == "" || got != urlVerdict(uri) {
			t.Errorf("plainURLScheme(%q) = %q, url.Parse says %q", uri, got, urlVerdict(uri))
		}
	}
	other := []string{
		"", "http://", "http:///x", "http://:80/", "http://a:/x", "http://a:8x/", "http://a:80:80/",
		"HTTP://a/", "Http://a/", "ftp://a/", "http:/a", "http:a", "//a/b", "http://a b/",
		"http://a%20b/", "http://a/%zz", "http://a/%20", "http://a/#x", "http://a/b#", "http://[::1]/",
		"http://u@a/", "http://u:p@a/", "http://a\x7f/", "http://a/\x00", "http://a/ b", "http://a/\u00e9",
		"http://a/b;c", "http://a/b,c", "http://a/b'c", "http://a/b\"c", "http://a\\b/", "http://a/b\\c",
		"http://a_b/", "http://a~b/", "http://a/b|c", "http://a/b{c}", "http://a/b^c", "http://a/b`c",
	}
	for _, uri := range other {
		if got := plainURLScheme(uri); got != "" && got != urlVerdict(uri) {
			t.Errorf("plainURLScheme(%q) = %q, url.Parse says %q", uri, got, urlVerdict(uri))
		}
	}
	// Random URLs over an alphabet of every kind of character around a
	// plain prefix.
	const alphabet = "aZ09-._~/?=&:@%#[]! ;,'\"\\|{}^`+$*()\x00\x7f\xc3\xa9"
	r := rand.New(rand.NewPCG(1, 2))
	prefixes := []string{"http://", "https://", "http://h", "https://h:1", "http://h/", "http://h?"}
	for range 200000 {
		b := []byte(prefixes[r.IntN(len(prefixes))])
		for range r.IntN(8) {
			b = append(b, alphabet[r.IntN(len(alphabet))])
		}
		uri := string(b)
		if got := plainURLScheme(uri); got != "" && got != urlVerdict(uri) {
			t.Fatalf("plainURLScheme(%q) = %q, url.Parse says %q", uri, got, urlVerdict(uri))
		}
	}
}
