module github.com/jobclock/scheduler/dashboard/browsertest

go 1.26.0

replace github.com/jobclock/scheduler => ../..

require (
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/jobclock/scheduler v0.0.0-00010101000000-000000000000
)

require (
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/teambition/rrule-go v1.8.2 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	software.sslmate.com/src/go-pkcs12 v0.7.4 // indirect
)
