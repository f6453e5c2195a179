package mutate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// body wraps statement lines in a function so Generate mutates them.
func body(stmts ...string) string {
	return "static int f(int x)\n{\n" + strings.Join(stmts, "\n") + "\n}\n"
}

// news returns the mutated lines Generate makes of src with operator op.
func news(src, op string) []string {
	var out []string
	for _, m := range Generate("fs/notify/t.c", src, nil) {
		if m.Op == op {
			out = append(out, strings.TrimSpace(m.New))
		}
	}
	return out
}

func TestOperators(t *testing.T) {
	for _, tc := range []struct {
		name, op string
		lines    []string
		want     []string
	}{
		{"negate simple", OpNegate, []string{"\tif (x)"}, []string{"if (!x)"}},
		{"negate negated", OpNegate, []string{"\tif (!x)"}, []string{"if (x)"}},
		{"negate call", OpNegate, []string{"\tif (unlikely(x > 1))"}, []string{"if (!unlikely(x > 1))"}},
		{"negate member", OpNegate, []string{"\tif (g->flags)"}, []string{"if (!g->flags)"}},
		{"negate expression", OpNegate, []string{"\tif (a == b || c)"}, []string{"if (!(a == b || c))"}},
		{"negate negated paren", OpNegate, []string{"\tif (!(m & FOO))"}, []string{"if ((m & FOO))"}},
		{"negate else if", OpNegate, []string{"\t} else if (x) {"}, []string{"} else if (!x) {"}},
		{"negate unclosed", OpNegate, []string{"\tif (a &&", "\t    b)"}, nil},
		{"negate not in a string", OpNegate, []string{`	s = "if (x)";`}, nil},
		{"negate not in a comment", OpNegate, []string{"\tx = 1; /* if (x) */"}, nil},
		{"andor", OpAndOr, []string{"\tif (a && b || c)"}, []string{"if (a || b || c)", "if (a && b && c)"}},
		{"relational", OpRelational, []string{"\tif (a < b && c >= d)"}, []string{"if (a <= b && c >= d)", "if (a < b && c > d)"}},
		{"relational not shifts or arrows", OpRelational, []string{"\tx = a << 2 | p->b >> 1;", "\tx <<= 1;"}, nil},
		{"equality", OpEquality, []string{"\tif (a == b && c != d)"}, []string{"if (a != b && c != d)", "if (a == b && c == d)"}},
		{"equality not assignments", OpEquality, []string{"\tx = a <= b;", "\tx += 1;", "\tx >= 1;"}, nil},
		{"bitwise", OpBitwise, []string{"\tm = a & b;", "\tm |= B;"}, []string{"m = a | b;", "m &= B;"}},
		{"bitwise not address-of", OpBitwise, []string{"\tp = &x;", "\tf(&x, (void *)&y);", "\treturn &x;"}, nil},
		{"bitwise not logical", OpBitwise, []string{"\tif (a && b || c)"}, nil},
		{"dropflag chain", OpDropFlag, []string{"\tm = FAN_OPEN | FAN_CLOSE | FAN_ONDIR;"},
			[]string{"m = FAN_CLOSE | FAN_ONDIR;", "m = FAN_OPEN | FAN_ONDIR;", "m = FAN_OPEN | FAN_CLOSE;"}},
		{"dropflag clear", OpDropFlag, []string{"\tif (flags & ~FAN_ALL)", "\tm = x & ~(A | B);"},
			[]string{"if (flags)", "m = x & ~(B);", "m = x & ~(A);", "m = x;"}},
		{"dropflag not a clearing statement", OpDropFlag, []string{"\tm &= ~y;"}, nil},
		{"return errno", OpReturn, []string{"\t\treturn -EINVAL;", "\treturn 0;"}, []string{"return 0;", "return -EINVAL;"}},
		{"return other", OpReturn, []string{"\treturn ret;", "\treturn -1;"}, nil},
		{"delcall", OpDeleteCall, []string{"\tfsnotify_put_mark(mark);", "\tspin_lock(&g->lock);"}, []string{";", ";"}},
		{"delcall after if", OpDeleteCall, []string{"\tif (x)", "\t\tkfree(p);"}, []string{";"}},
		{"delcall not a tail", OpDeleteCall, []string{"\tx = a ^", "\t\thash(b);", "\tfoo(a,", "\t    b);"}, nil},
		{"delcall not debug helpers", OpDeleteCall, []string{"\tpr_debug(\"x\");", "\tWARN_ON(x);", "\tlockdep_assert_held(&l);"}, nil},
		{"delcall not an assignment", OpDeleteCall, []string{"\tx = f(a);"}, nil},
		{"offbyone literal", OpOffByOne, []string{"\tif (n > 4)"}, []string{"if (n > 3)", "if (n > 5)"}},
		{"offbyone name", OpOffByOne, []string{"\tif (n >= MAX)"}, []string{"if (n >= (MAX - 1))", "if (n >= (MAX + 1))"}},
		{"offbyone zero", OpOffByOne, []string{"\tif (ret == 0)"}, []string{"if (ret == 1)"}},
		{"offbyone not shifts or enum equality", OpOffByOne, []string{"\tx = y << 2;", "\tif (t == TYPE_A)"}, nil},
		{"nothing at compile time", OpEquality, []string{"\tBUILD_BUG_ON(A != B);"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := news(body(tc.lines...), tc.op)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%q: -want +got:\n%s", tc.lines, diff)
			}
		})
	}
}

func TestScan(t *testing.T) {
	src := `/* header comment { */
#define M(x) do { if (x) f(); } while (0)
static const struct file_operations fops = {
	.read = r,
};

struct s {
	int a;
};

static int __init setup(void)
{
	char *s = "}{";
	if (x) /* } */ {
		g();
	}
	return 0;
}

SYSCALL_DEFINE2(inotify_init1, int, flags)
{
	return do_init(flags);
}

void locked(struct g *g)
	__releases(&g->lock)
{
#ifdef CONFIG_X
	x();
#endif
}
`
	var got []string
	for _, l := range Scan(src) {
		if l.InBody {
			got = append(got, strings.TrimSpace(l.Text)+" @"+l.Func)
		}
		if l.Directive && l.InBody {
			got[len(got)-1] += " directive"
		}
	}
	want := []string{
		`char *s = "}{"; @setup`,
		`if (x) /* } */ { @setup`,
		`g(); @setup`,
		`} @setup`,
		`return 0; @setup`,
		`} @setup`,
		`return do_init(flags); @sys_inotify_init1`,
		`} @sys_inotify_init1`,
		`#ifdef CONFIG_X @locked directive`,
		`x(); @locked`,
		`#endif @locked directive`,
		`} @locked`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines in function bodies: -want +got:\n%s", diff)
	}
	// Nothing outside a body, in a macro, a string or a comment is mutated.
	for _, m := range Generate("fs/notify/t.c", src, nil) {
		if m.Func == "" || m.Line < 11 {
			t.Errorf("mutant outside a function body: %s %s %q", m.Where(), m.Op, m.New)
		}
	}
}

func TestGenerateIDsAndDiff(t *testing.T) {
	src := body("\tif (x)", "\t\treturn -EINVAL;", "\tif (x)", "\t\treturn -EINVAL;", "\treturn 0;")
	ms := Generate("fs/notify/t.c", src, nil)
	ids := map[string]bool{}
	for _, m := range ms {
		if ids[m.ID] {
			t.Errorf("duplicate id %s (%s %s)", m.ID, m.Where(), m.Op)
		}
		ids[m.ID] = true
	}
	// An edit elsewhere in the file moves lines but keeps ids.
	moved := Generate("fs/notify/t.c", "/* new */\n\n"+src, nil)
	if len(moved) != len(ms) {
		t.Fatalf("%d mutants after the edit, %d before", len(moved), len(ms))
	}
	for i := range ms {
		if moved[i].ID != ms[i].ID || moved[i].Line != ms[i].Line+2 {
			t.Errorf("mutant %d: id %s line %d after the edit, %s line %d before", i, moved[i].ID, moved[i].Line, ms[i].ID, ms[i].Line)
		}
	}
	var ret *Mutant
	for i := range ms {
		if ms[i].Op == OpReturn {
			ret = &ms[i]
			break
		}
	}
	if ret == nil {
		t.Fatal("no return mutant")
	}
	wantDiff := "--- a/fs/notify/t.c\n+++ b/fs/notify/t.c\n@@ -1,7 +1,7 @@\n static int f(int x)\n {\n \tif (x)\n-\t\treturn -EINVAL;\n+\t\treturn 0;\n \tif (x)\n \t\treturn -EINVAL;\n \treturn 0;\n"
	if diff := cmp.Diff(wantDiff, ret.Diff); diff != "" {
		t.Errorf("diff: -want +got:\n%s", diff)
	}
	// keep selects lines (BASE=).
	only := Generate("fs/notify/t.c", src, func(n int) bool { return n == 7 })
	if len(only) != 1 || only[0].Line != 7 || only[0].Op != OpReturn {
		t.Errorf("keep line 7: got %+v", only)
	}
}

func TestSample(t *testing.T) {
	var ms []Mutant
	for i := range 50 {
		ms = append(ms, Mutant{ID: string(rune('a' + i%26)), Line: i})
	}
	a, b := Sample(ms, 10, 1), Sample(ms, 10, 1)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different samples:\n%s", diff)
	}
	if len(a) != 10 {
		t.Fatalf("sample of %d, want 10", len(a))
	}
	// Drawn order, not source order, and a shorter sample is a prefix: a
	// run stopped after k mutants ran the sample of k.
	sorted := true
	for i := 1; i < len(a); i++ {
		sorted = sorted && a[i].Line > a[i-1].Line
	}
	if sorted {
		t.Errorf("sample in source order: a run cut short would sample only the first files")
	}
	if diff := cmp.Diff(a[:4], Sample(ms, 4, 1)); diff != "" {
		t.Errorf("the sample of 4 is not the first 4 of the sample of 10:\n%s", diff)
	}
	if cmp.Equal(a, Sample(ms, 10, 2)) {
		t.Errorf("seeds 1 and 2 gave the same sample")
	}
	for _, n := range []int{0, -1, 50, 60} {
		if got := Sample(ms, n, 1); len(got) != 50 {
			t.Errorf("Sample(n=%d) has %d, want all 50", n, len(got))
		}
	}
	sel, err := Select([]Mutant{{ID: "x"}, {ID: "y"}}, []string{"y"})
	if err != nil || len(sel) != 1 || sel[0].ID != "y" {
		t.Errorf("Select y: %v %v", sel, err)
	}
	if _, err := Select([]Mutant{{ID: "x"}}, []string{"z"}); err == nil {
		t.Errorf("Select of an unknown id: no error")
	}
}
