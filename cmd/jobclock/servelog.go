package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"

	scheduler "github.com/jobclock/scheduler"
)

// logFlags are the flags of what serve's log says, and how.
type logFlags struct {
	verbose *bool
	format  *string
}

func addLogFlags(fs *flag.FlagSet) *logFlags {
	return &logFlags{
		verbose: fs.Bool("v", false, "log one line per attempt of a job's action (INFO), besides the WARN line of each\n"+
			"faulted occurrence and failed errorAction"),
		format: fs.String("log-format", "text", "log `format`: text (key=value) or json (one JSON object per line)"),
	}
}

// check reports a -log-format that is neither text nor json.
func (f *logFlags) check() error {
	if *f.format != "text" && *f.format != "json" {
		return fmt.Errorf("-log-format %q: use text or json", *f.format)
	}
	return nil
}

// logger returns the logger that writes to w in the format asked for.
func (f *logFlags) logger(w io.Writer) *slog.Logger {
	if *f.format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// onHistory returns the Config.OnHistory that logs what happened to the
// jobs: a WARN line for each faulted occurrence and each failed attempt of
// an errorAction, and with -v an INFO line for every attempt.
func (f *logFlags) onHistory(log *slog.Logger) func(scheduler.HistoryEntry) {
	verbose := *f.verbose
	return func(h scheduler.HistoryEntry) {
		attrs := []any{"collection", h.Collection, "job", h.Job, "execution_tag", h.ExecutionTag, "occurrence", h.RepeatCount}
		if verbose {
			log.Info("attempt", append(attrs, "action", string(h.ActionName), "status", string(h.Status), "retry", h.RetryCount,
				"duration", h.EndTime.Sub(h.StartTime), "message", h.Message)...)
		}
		switch {
		case h.Faulted:
			log.Warn("occurrence faulted", append(attrs, "attempts", h.RetryCount+1, "message", h.Message)...)
		case h.ActionName == scheduler.ErrorAction && h.Status == scheduler.StatusFailed:
			log.Warn("errorAction failed", append(attrs, "retry", h.RetryCount, "message", h.Message)...)
		}
	}
}
