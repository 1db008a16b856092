package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readmeImports are the packages a README snippet may use without
// importing them, by the name it uses them under.
var readmeImports = map[string]string{
	"context":       "context",
	"errors":        "errors",
	"fmt":           "fmt",
	"http":          "net/http",
	"log":           "log",
	"os":            "os",
	"slog":          "log/slog",
	"synctest":      "testing/synctest",
	"testing":       "testing",
	"time":          "time",
	"pgx":           "github.com/jackc/pgx/v5",
	"pgxpool":       "github.com/jackc/pgx/v5/pgxpool",
	"scheduler":     "github.com/jobclock/scheduler",
	"action":        "github.com/jobclock/scheduler/action",
	"azure":         "github.com/jobclock/scheduler/action/azure",
	"servicebus":    "github.com/jobclock/scheduler/action/servicebus",
	"storagequeue":  "github.com/jobclock/scheduler/action/storagequeue",
	"dashboard":     "github.com/jobclock/scheduler/dashboard",
	"httpapi":       "github.com/jobclock/scheduler/httpapi",
	"recurrence":    "github.com/jobclock/scheduler/recurrence",
	"schedulertest": "github.com/jobclock/scheduler/schedulertest",
	"secrets":       "github.com/jobclock/scheduler/secrets",
	"memory":        "github.com/jobclock/scheduler/store/memory",
	"postgres":      "github.com/jobclock/scheduler/store/postgres",
	"sqlite":        "github.com/jobclock/scheduler/store/sqlite",
	"telemetry":     "github.com/jobclock/scheduler/telemetry",
}

// readmeHelpers declares the names the README's snippets take from the
// reader's own program. Every snippet is compiled beside it, in a package
// of its own.
const readmeHelpers = `package snippet

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/schedulertest"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

var (
	ctx      = context.Background()
	logger   = slog.Default()
	st       scheduler.Store // a store, as st is in the README
	store    scheduler.Store
	s        *scheduler.Scheduler
	reg      = new(action.Registry)
	mux      = http.NewServeMux()
	tp       trace.TracerProvider
	mp       metric.MeterProvider
	pool     *pgxpool.Pool
	id       string
	total    int
	due      time.Time
	followUp *action.Handler[FollowUp]
	t        *testing.T
	want     []schedulertest.Entry
)

// FollowUp is the payload of examples/txjob's follow-up job.
type FollowUp struct{ Order string }

// send is the reader's function that sends a report.
func send(ctx context.Context, to string) error { return nil }

var (
	_ = ctx
	_ = logger
	_ = st
	_ = store
	_ = s
	_ = reg
	_ = mux
	_ = tp
	_ = mp
	_ = pool
	_ = id
	_ = total
	_ = due
	_ = followUp
	_ = t
	_ = want
	_ = send
)
`

// readmeSnippet is one go block of README.md.
type readmeSnippet struct {
	line int    // of the block's first line of code
	code string // the block's text
}

// readmeSnippets returns the go blocks of a Markdown text.
func readmeSnippets(markdown []byte) []readmeSnippet {
	var out []readmeSnippet
	var cur *readmeSnippet
	sc := bufio.NewScanner(bytes.NewReader(markdown))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &readmeSnippet{line: n + 1}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.code += line + "\n"
		}
	}
	return out
}

// snippetFile returns a snippet as a Go file of package snippet: as it is
// when it is a list of declarations (func main included), else as the body
// of a function that returns an error. Its own imports are kept, and each
// package of readmeImports it names is imported. A line directive points
// compiler messages at README.md. The variables a statement list declares,
// other than err, are left to the rest of the reader's program: the file
// uses them after the list, so that only an unhandled err is refused.
func snippetFile(readme string, sn readmeSnippet) (string, error) {
	fset := token.NewFileSet()
	const pkg = "package snippet\n"
	head, err := parser.ParseFile(fset, "", pkg+sn.code, parser.ImportsOnly)
	if err != nil {
		return "", err
	}
	imported := map[string]bool{}
	var imports []string
	for _, spec := range head.Imports {
		path, _ := strconv.Unquote(spec.Path.Value)
		name, line := path[strings.LastIndex(path, "/")+1:], spec.Path.Value
		if spec.Name != nil {
			name, line = spec.Name.Name, spec.Name.Name+" "+line
		}
		imported[name] = true
		imports = append(imports, line)
	}
	rest, restLine := sn.code, sn.line
	if len(head.Decls) > 0 {
		end := fset.Position(head.Decls[len(head.Decls)-1].End())
		rest = (pkg + sn.code)[end.Offset:]
		restLine = sn.line + end.Line - 2
	}
	directive := fmt.Sprintf("//line %s:%d\n", readme, restLine)

	var body string
	var uses []string
	file, err := parser.ParseFile(fset, "", pkg+rest, 0)
	if err == nil {
		body = directive + rest
	} else {
		file, err = parser.ParseFile(fset, "", pkg+"func _() error {\n"+rest+"}\n", 0)
		if err != nil {
			return "", err
		}
		fn := file.Decls[0].(*ast.FuncDecl)
		for _, stmt := range fn.Body.List {
			as, ok := stmt.(*ast.AssignStmt)
			if !ok || as.Tok != token.DEFINE {
				continue
			}
			for _, lhs := range as.Lhs {
				if id, ok := lhs.(*ast.Ident); ok && id.Name != "_" && id.Name != "err" && !slices.Contains(uses, id.Name) {
					uses = append(uses, id.Name)
				}
			}
		}
		body = "func _() error {\n" + directive + rest
		for _, u := range uses {
			body += "_ = " + u + "\n"
		}
		body += "return nil\n}\n"
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && readmeImports[x.Name] != "" && !imported[x.Name] {
				imported[x.Name] = true
				imports = append(imports, x.Name+" "+strconv.Quote(readmeImports[x.Name]))
			}
		}
		return true
	})
	return pkg + "\nimport (\n" + strings.Join(imports, "\n") + "\n)\n\n" + body, nil
}

var replaceRelative = regexp.MustCompile(`=> (\.\.?/\S*)`)

// TestREADMESnippetsCompile compiles every go block of README.md, each in a
// package of its own beside readmeHelpers, in a module with this module's
// requirements, offline: the module cache holds them from this test's own
// build. go test's cache does not notice a change to README.md (it is
// outside this module): run it with -count=1, as scripts/test.sh does.
func TestREADMESnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the README's snippets")
	}
	readme, err := filepath.Abs(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	markdown, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	snippets := readmeSnippets(markdown)
	if len(snippets) == 0 {
		t.Fatal("README.md has no go block")
	}

	dir := t.TempDir()
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	gomod = replaceRelative.ReplaceAllFunc(gomod, func(m []byte) []byte {
		abs, err := filepath.Abs(string(m[len("=> "):]))
		if err != nil {
			t.Fatal(err)
		}
		return []byte("=> " + abs)
	})
	gomod = bytes.Replace(gomod, []byte("module github.com/jobclock/scheduler/cmd/jobclock"), []byte("module readme.example"), 1)
	gosum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", gomod)
	write("go.sum", gosum)
	for _, sn := range snippets {
		src, err := snippetFile(readme, sn)
		if err != nil {
			t.Errorf("README.md:%d: %v", sn.line, err)
			continue
		}
		pkg := fmt.Sprintf("line%d", sn.line)
		write(filepath.Join(pkg, "snippet.go"), []byte(src))
		write(filepath.Join(pkg, "helpers.go"), []byte(readmeHelpers))
	}

	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the README's go blocks do not compile (%v):\n%s", err, out)
	}
}

// readmeTranscript is a "$ jobclock ..." line of a fenced block of
// README.md and the lines after it up to the block's end: what the command
// prints, standard error and standard output in the order it writes them.
type readmeTranscript struct {
	line int      // of the command
	args []string // after "jobclock"
	want string
}

// readmeTranscripts returns the transcripts of a Markdown text. A
// transcript's command is split at spaces: it may not quote.
func readmeTranscripts(markdown []byte) []readmeTranscript {
	var out []readmeTranscript
	var cur *readmeTranscript
	fenced := false
	sc := bufio.NewScanner(bytes.NewReader(markdown))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "```"):
			if fenced && cur != nil {
				out = append(out, *cur)
				cur = nil
			}
			fenced = !fenced
		case fenced && strings.HasPrefix(line, "$ jobclock "):
			if cur != nil {
				out = append(out, *cur)
			}
			cur = &readmeTranscript{line: n, args: strings.Fields(strings.TrimPrefix(line, "$ jobclock "))}
		case cur != nil:
			cur.want += line + "\n"
		}
	}
	return out
}

// TestREADMETranscripts runs each "$ jobclock ..." transcript of README.md
// from the repository's root and compares what it prints, standard error
// and standard output together, with the lines that follow it. Run it with
// -count=1 after a change to README.md, as TestREADMESnippetsCompile.
func TestREADMETranscripts(t *testing.T) {
	markdown, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	transcripts := readmeTranscripts(markdown)
	if len(transcripts) == 0 {
		t.Fatal("README.md has no $ jobclock transcript")
	}
	t.Chdir(filepath.Join("..", ".."))
	for _, tr := range transcripts {
		var out bytes.Buffer
		if code := run(tr.args, strings.NewReader(""), &out, &out); code != 0 {
			t.Errorf("README.md:%d: jobclock %s exits %d:\n%s", tr.line, strings.Join(tr.args, " "), code, out.String())
			continue
		}
		if got := out.String(); got != tr.want {
			t.Errorf("README.md:%d: jobclock %s prints\n%s\nthe README says\n%s", tr.line, strings.Join(tr.args, " "), got, tr.want)
		}
	}
}
