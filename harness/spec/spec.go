// Package spec is the rule map of the fsnotify man pages: every normative
// rule of fanotify(7), fanotify_init(2), fanotify_mark(2), inotify(7) and
// inotify_add_watch(2), one line each in this project's own words, with a
// stable id, plus the rules where the kernel's source says more than the
// page (marked with the source it comes from). The map is rules.txt, embedded;
// test binaries declare which rules each case checks (harness.Suite.Rules),
// and Cover joins the two into the list of rules no case checks.
package spec

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
)

//go:embed rules.txt
var rulesText []byte

// Pages are the man pages the map covers, as they appear in a rule id.
var Pages = []string{"fanotify.7", "fanotify_init.2", "fanotify_mark.2", "inotify.7", "inotify_add_watch.2"}

// Rule is one line of the map.
type Rule struct {
	// ID is PAGE/SECTION/NAME, e.g. fanotify_mark.2/errors/EINVAL-no-action.
	ID string
	// Page and Section are the first two parts of the ID.
	Page, Section string
	// Text states the rule in the project's own words.
	Text string
	// Source, when set, cites the kernel source (file and function) where
	// the kernel goes further than the page; the rule is then the source's.
	Source string
	// Untestable, when set, says why no case can check the rule (it needs
	// a filesystem, hardware or configuration a test machine lacks, or it
	// is not a behaviour of the kernel).
	Untestable string
	// Line is the rule's line in rules.txt.
	Line int
}

// Map is the parsed rule map.
type Map struct {
	// Header holds the "@key value" lines (e.g. "manpages": the package
	// and version the rules were read from).
	Header map[string]string
	// Rules in file order.
	Rules []Rule
	byID  map[string]int
}

var idRE = regexp.MustCompile(`^([a-z_]+\.[27])/([a-z0-9_]+)/([A-Za-z0-9_.+-]+)$`)

// Parse reads a rule map. A line is "ID | text" optionally followed by
// " | src: FILE FUNCTION" and/or " | untestable: REASON"; "#" starts a comment
// line and "@key value" a header line. Every id must be well formed, name one
// of Pages and be unique; a text must not be empty.
func Parse(r io.Reader) (*Map, error) {
	m := &Map{Header: map[string]string{}, byID: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	pages := map[string]bool{}
	for _, p := range Pages {
		pages[p] = true
	}
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "@") {
			k, v, _ := strings.Cut(line[1:], " ")
			if k == "" || strings.TrimSpace(v) == "" {
				return nil, fmt.Errorf("line %d: header %q: want \"@key value\"", n, line)
			}
			m.Header[k] = strings.TrimSpace(v)
			continue
		}
		fields := strings.Split(line, " | ")
		if len(fields) < 2 {
			return nil, fmt.Errorf("line %d: want \"ID | text\", got %q", n, line)
		}
		rule := Rule{ID: strings.TrimSpace(fields[0]), Text: strings.TrimSpace(fields[1]), Line: n}
		sm := idRE.FindStringSubmatch(rule.ID)
		if sm == nil {
			return nil, fmt.Errorf("line %d: id %q: want PAGE/SECTION/NAME (%s)", n, rule.ID, idRE)
		}
		if !pages[sm[1]] {
			return nil, fmt.Errorf("line %d: id %q: page %q is none of %s", n, rule.ID, sm[1], strings.Join(Pages, ", "))
		}
		rule.Page, rule.Section = sm[1], sm[2]
		if rule.Text == "" {
			return nil, fmt.Errorf("line %d: %s: empty text", n, rule.ID)
		}
		for _, f := range fields[2:] {
			f = strings.TrimSpace(f)
			switch {
			case strings.HasPrefix(f, "src: ") && rule.Source == "":
				rule.Source = strings.TrimSpace(strings.TrimPrefix(f, "src: "))
			case strings.HasPrefix(f, "untestable: ") && rule.Untestable == "":
				rule.Untestable = strings.TrimSpace(strings.TrimPrefix(f, "untestable: "))
			default:
				return nil, fmt.Errorf("line %d: %s: field %q: want \"src: ...\" or \"untestable: ...\" (each once)", n, rule.ID, f)
			}
		}
		if prev, dup := m.byID[rule.ID]; dup {
			return nil, fmt.Errorf("line %d: id %s already on line %d", n, rule.ID, m.Rules[prev].Line)
		}
		m.byID[rule.ID] = len(m.Rules)
		m.Rules = append(m.Rules, rule)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(m.Rules) == 0 {
		return nil, fmt.Errorf("no rules")
	}
	return m, nil
}

var (
	loadOnce sync.Once
	loaded   *Map
	loadErr  error
)

// Load returns the embedded rule map (parsed once).
func Load() (*Map, error) {
	loadOnce.Do(func() {
		loaded, loadErr = Parse(bytes.NewReader(rulesText))
		if loadErr != nil {
			loadErr = fmt.Errorf("harness/spec/rules.txt: %w", loadErr)
		}
	})
	return loaded, loadErr
}

// Lookup returns the rule with the given id.
func (m *Map) Lookup(id string) (Rule, bool) {
	i, ok := m.byID[id]
	if !ok {
		return Rule{}, false
	}
	return m.Rules[i], true
}

// Claim is one declared pair: a leaf of a binary checks a rule.
type Claim struct {
	Binary, Leaf, Rule string
}

// Report is what Cover found.
type Report struct {
	// Total is the number of rules in the map.
	Total int
	// Covered are the rules some leaf claims, by id, with the leaves.
	Covered map[string][]string
	// Untestable are the rules the map says no case can check (none of
	// them claimed).
	Untestable []Rule
	// Missing are the testable rules no leaf claims.
	Missing []Rule
	// Unknown are claims naming a rule the map does not have.
	Unknown []Claim
	// SourceRules counts the rules marked with a kernel source.
	SourceRules int
}

// Cover joins the map with the binaries' claims.
func Cover(m *Map, claims []Claim) Report {
	r := Report{Total: len(m.Rules), Covered: map[string][]string{}}
	for _, c := range claims {
		if _, ok := m.byID[c.Rule]; !ok {
			r.Unknown = append(r.Unknown, c)
			continue
		}
		r.Covered[c.Rule] = append(r.Covered[c.Rule], c.Binary+" "+c.Leaf)
	}
	for _, rule := range m.Rules {
		if rule.Source != "" {
			r.SourceRules++
		}
		if len(r.Covered[rule.ID]) > 0 {
			continue
		}
		if rule.Untestable != "" {
			r.Untestable = append(r.Untestable, rule)
		} else {
			r.Missing = append(r.Missing, rule)
		}
	}
	for _, leaves := range r.Covered {
		sort.Strings(leaves)
	}
	return r
}

// Write prints the report: the verdict line first, then the rules without a
// case, then the untestable ones with their reasons. With verbose, every
// covered rule is listed with its leaves.
func (r Report) Write(w io.Writer, m *Map, verbose bool) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "spec-coverage: %d rules (%s), %d checked by a case, %d without a case, %d untestable (reason in the map); %d of them the kernel source's\n",
		r.Total, m.Header["manpages"], len(r.Covered), len(r.Missing), len(r.Untestable), r.SourceRules)
	if len(r.Unknown) > 0 {
		fmt.Fprintf(bw, "\n%d claims name a rule the map lacks:\n", len(r.Unknown))
		for _, c := range r.Unknown {
			fmt.Fprintf(bw, "  %s %s %s\n", c.Binary, c.Leaf, c.Rule)
		}
	}
	if len(r.Missing) > 0 {
		fmt.Fprintf(bw, "\nwithout a case (%d):\n", len(r.Missing))
		for _, rule := range r.Missing {
			fmt.Fprintf(bw, "  %s  %s\n", rule.ID, rule.Text)
		}
	}
	if len(r.Untestable) > 0 {
		fmt.Fprintf(bw, "\nuntestable (%d):\n", len(r.Untestable))
		for _, rule := range r.Untestable {
			fmt.Fprintf(bw, "  %s  (%s)\n", rule.ID, rule.Untestable)
		}
	}
	if verbose {
		fmt.Fprintf(bw, "\nchecked (%d):\n", len(r.Covered))
		for _, rule := range m.Rules {
			if leaves := r.Covered[rule.ID]; len(leaves) > 0 {
				fmt.Fprintf(bw, "  %s\n", rule.ID)
				for _, l := range leaves {
					fmt.Fprintf(bw, "      %s\n", l)
				}
			}
		}
	}
	return bw.Flush()
}
