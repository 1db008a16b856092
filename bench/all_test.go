package bench_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAllScriptWired checks bench/all.sh without running a benchmark: the
// script parses, and every command it would run, in the full and in the
// QUICK mode (as LIST=1 prints them), names a program or script that exists
// and, for `go test -bench`, a pattern that selects at least one benchmark
// in every package given. A renamed benchmark or a moved package fails here
// instead of leaving a section of BENCHMARKS.md's run empty.
func TestAllScriptWired(t *testing.T) {
	if out, err := exec.Command("bash", "-n", "all.sh").CombinedOutput(); err != nil {
		t.Fatalf("bash -n all.sh: %v\n%s", err, out)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	checked := make(map[string]bool) // dir, pattern and package already listed
	for _, mode := range []string{"", "1"} {
		name := "full"
		if mode != "" {
			name = "QUICK=1"
		}
		cmd := exec.Command("bash", "all.sh")
		cmd.Env = append(os.Environ(), "LIST=1", "QUICK="+mode)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("LIST=1 bash all.sh (%s): %v", name, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) < 10 {
			t.Fatalf("LIST=1 bash all.sh (%s) listed %d commands, want every part:\n%s", name, len(lines), out)
		}
		var benches int
		for _, line := range lines {
			dir := root
			for _, step := range strings.Split(line, " && ") {
				words := shellWords(step)
				for len(words) > 0 && strings.Contains(words[0], "=") { // VAR=value before a command
					words = words[1:]
				}
				if len(words) == 0 {
					t.Errorf("%s: empty step in %q", name, line)
					continue
				}
				switch {
				case words[0] == "cd":
					dir = filepath.Join(dir, words[1])
				case words[0] == "bash":
					if _, err := os.Stat(filepath.Join(dir, words[1])); err != nil {
						t.Errorf("%s: %q: %v", name, line, err)
					}
				case len(words) > 2 && words[0] == "go" && words[1] == "run":
					if _, err := os.Stat(filepath.Join(dir, words[2], "main.go")); err != nil {
						t.Errorf("%s: %q: %v", name, line, err)
					}
				case len(words) > 2 && words[0] == "go" && words[1] == "test":
					benches++
					checkBench(t, dir, words, checked)
				}
			}
		}
		if benches < 10 {
			t.Errorf("%s: %d go test commands, want every part's", name, benches)
		}
	}
}

// checkBench runs `go test -list` with the top level of the -bench pattern
// of a go test command's words, in dir, and fails unless every package
// lists a benchmark. It skips what checked holds, and adds what it lists.
func checkBench(t *testing.T, dir string, words []string, checked map[string]bool) {
	t.Helper()
	var pattern string
	var pkgs []string
	for i := 2; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-bench":
			i++
			pattern = words[i]
		case w == "-run" || w == "-benchtime" || w == "-count":
			i++
		case strings.HasPrefix(w, "-"):
		default:
			pkgs = append(pkgs, w)
		}
	}
	if pattern == "" || len(pkgs) == 0 {
		t.Errorf("%q: no -bench pattern or no package", strings.Join(words, " "))
		return
	}
	top := topLevel(pattern)
	for _, pkg := range pkgs {
		key := dir + "\x00" + top + "\x00" + pkg
		if checked[key] {
			continue
		}
		checked[key] = true
		cmd := exec.Command("go", "test", "-list", top, pkg)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("go test -list %q %s in %s: %v\n%s", top, pkg, dir, err, out)
			continue
		}
		if !strings.Contains(string(out), "\nBenchmark") && !strings.HasPrefix(string(out), "Benchmark") {
			t.Errorf("-bench %q selects no benchmark in %s (go test -list %q):\n%s", pattern, pkg, top, out)
		}
	}
}

// topLevel returns the part of a -bench pattern that go test matches
// against top-level benchmark names: each alternative up to its first
// slash outside parentheses and brackets, as the testing package splits it.
func topLevel(pattern string) string {
	var alts []string
	depth, start := 0, 0
	cut := -1
	for i, r := range pattern {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '/':
			if depth == 0 && cut < 0 {
				cut = i
			}
		case '|':
			if depth == 0 {
				alts = append(alts, alt(pattern, start, cut, i))
				start, cut = i+1, -1
			}
		}
	}
	alts = append(alts, alt(pattern, start, cut, len(pattern)))
	return strings.Join(alts, "|")
}

func alt(pattern string, start, cut, end int) string {
	if cut >= 0 {
		return pattern[start:cut]
	}
	return pattern[start:end]
}

// shellWords splits a command line into words the way bash does for the
// commands of all.sh: spaces separate words, single and double quotes group
// them.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}
