module github.com/jobclock/scheduler/bench

go 1.26.0

replace github.com/jobclock/scheduler => ../

require (
	github.com/go-co-op/gocron/v2 v2.21.2
	github.com/google/uuid v1.6.0 // indirect
	github.com/jobclock/scheduler v0.0.0-00010101000000-000000000000
	github.com/jonboulle/clockwork v0.5.0 // indirect
	github.com/robfig/cron/v3 v3.0.1
	github.com/tailscale/hujson v0.0.0-20260727124030-b80ff77dac4f // indirect
	github.com/teambition/rrule-go v1.8.2 // indirect
	golang.org/x/crypto v0.55.0 // indirect
	software.sslmate.com/src/go-pkcs12 v0.7.4 // indirect
)
