// Package schedulertest helps hosts test code that uses the scheduler: a
// Scheduler over the memory store ready to run inside a testing/synctest
// bubble, an executor and an HTTP receiver that record every attempt with
// its execution metadata, waits that fail with a readable diff instead of
// hanging, and assertions on a job's history.
//
// A test of a job that runs every night, under synctest's fake clock (the
// three nights pass in milliseconds):
//
//	func TestNightlyReport(t *testing.T) {
//		synctest.Test(t, func(t *testing.T) {
//			rec := schedulertest.NewRecorder(nil)
//			reg := new(action.Registry)
//			reg.Register("Report", rec)
//			s := schedulertest.New(t, &scheduler.Config{Executors: reg})
//			s.Timeout = 72 * time.Hour // fake time
//			if _, err := s.Schedule(t.Context(), "nightly", recurrence.Daily(2, 0), action.Action{Type: "Report"}); err != nil {
//				t.Fatal(err)
//			}
//			s.WaitRuns(scheduler.DefaultCollection, "nightly", 3)
//			night := func(d int) time.Time { return time.Date(2000, 1, d, 2, 0, 0, 0, time.UTC) }
//			s.AssertHistory(scheduler.DefaultCollection, "nightly", []schedulertest.Entry{
//				{Action: scheduler.MainAction, Status: scheduler.StatusCompleted, Repeat: 1, Expected: night(1), Start: night(1), Message: "recorded"},
//				{Action: scheduler.MainAction, Status: scheduler.StatusCompleted, Repeat: 2, Expected: night(2), Start: night(2), Message: "recorded"},
//				{Action: scheduler.MainAction, Status: scheduler.StatusCompleted, Repeat: 3, Expected: night(3), Start: night(3), Message: "recorded"},
//			})
//		})
//	}
//
// [New] makes the Scheduler (call it inside the bubble, which is where its
// goroutines must live) and stops it when the test ends; [Wrap] gives the
// same helpers for a Scheduler of your own, such as one over SQLite.
// [Recorder] stands in for an executor; [Receiver] is an HTTP endpoint
// for Http jobs, reached through memory so that it works inside a bubble.
package schedulertest
