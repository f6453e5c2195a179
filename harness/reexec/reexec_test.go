package reexec

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A command carries exactly one role, replacing an inherited one, and argv[0]
// names the binary and the role.
func TestCommandReplacesInheritedRole(t *testing.T) {
	t.Setenv(EnvRole, "cases:3")
	if r, s := Current(); r != "cases" || s != "3" {
		t.Fatalf("Current() = %q, %q; want cases, 3", r, s)
	}
	cmd := Command("actor", "", "x")
	var roles []string
	for _, e := range cmd.Env {
		if strings.HasPrefix(e, EnvRole+"=") {
			roles = append(roles, e)
		}
	}
	if len(roles) != 1 || roles[0] != EnvRole+"=actor" {
		t.Errorf("roles in the environment: %q, want [%s=actor]", roles, EnvRole)
	}
	if !strings.HasSuffix(cmd.Args[0], ":actor") || cmd.Args[1] != "x" {
		t.Errorf("argv %q", cmd.Args)
	}
	if cmd.Path != "/proc/self/exe" {
		t.Errorf("path %q, want /proc/self/exe", cmd.Path)
	}
}

// Dispatch returns for a process without a role or with an unregistered one.
func TestDispatchWithoutRole(t *testing.T) {
	os.Unsetenv(EnvRole)
	Dispatch()
	t.Setenv(EnvRole, "not_registered")
	Dispatch()
}

func TestRunReport(t *testing.T) {
	var rep struct{ N int }
	if err := RunReport(exec.Command("sh", "-c", `echo '{"N": 7}'`), &rep); err != nil || rep.N != 7 {
		t.Errorf("RunReport = %v, report %+v; want nil, N 7", err, rep)
	}
	err := RunReport(exec.Command("sh", "-c", `echo not json; echo why >&2`), &rep)
	if err == nil || !strings.Contains(err.Error(), "its report") || !strings.Contains(err.Error(), "why") {
		t.Errorf("RunReport of a bad report = %v; want an error naming the report and the stderr", err)
	}
	if err := RunReport(exec.Command("sh", "-c", `exit 3`), &rep); err == nil {
		t.Errorf("RunReport of a failed helper = nil; want its failure")
	}
}
