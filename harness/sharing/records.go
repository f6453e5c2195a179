package sharing

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Files of the sharing profile in a results directory.
const (
	// PluginFile is the plugin's output, copied from the host side of the run.
	PluginFile = "sharing-plugin.txt"
	// ChunksFile is the guest engine's chunk log (the guest's /results).
	ChunksFile = "sharing-chunks.txt"
	// ReportFile is Analyze's report, written by WriteReport.
	ReportFile = "sharing.txt"
)

// Window is one of the plugin's windows.
type Window struct {
	Seq          int
	Tag          int
	Stores       int64 // kernel-mode stores of every vCPU
	Lines        int64 // distinct 64-byte physical lines written
	SharedWrites int64 // stores to lines more than one vCPU wrote in the window
	SharedLines  int64 // such lines
	RemoteWrites int64 // of those, the writes not by each line's main writer (its writes minus its top vCPU's)
	Transfers    int64 // stores to a line whose last writer was another vCPU
	VCPUs        int   // vCPUs that stored
	TagMismatch  bool  // the stop marker's tag was not the start marker's
	Foreign      int64 // kernel stores left out: their vCPU's last syscall was not from the workload's site
	Hot          []Hot
}

// Hot is one of a window's most written shared lines.
type Hot struct {
	Line    uint64 // physical address
	Writes  int64
	Remote  int64  // writes not by the line's most writing vCPU
	Writers uint64 // mask of vCPUs
	PC      uint64 // a writing instruction (the majority writer, if any)
}

// Plugin is the plugin's whole output.
type Plugin struct {
	VCPUs   int
	Windows []Window
	// End is the plugin's end line (qemu exited and the plugin's atexit ran);
	// empty when the output was cut short.
	End string
}

func fields(s string) (string, map[string]string) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return "", nil
	}
	kv := map[string]string{}
	for _, x := range f[1:] {
		if k, v, ok := strings.Cut(x, "="); ok {
			kv[k] = v
		}
	}
	return f[0], kv
}

func num(kv map[string]string, k string) (int64, error) {
	v, ok := kv[k]
	if !ok {
		return 0, fmt.Errorf("no %s=", k)
	}
	return strconv.ParseInt(v, 0, 64)
}

func unum(kv map[string]string, k string) (uint64, error) {
	v, ok := kv[k]
	if !ok {
		return 0, fmt.Errorf("no %s=", k)
	}
	return strconv.ParseUint(v, 0, 64)
}

// ParsePlugin reads the plugin's output.
func ParsePlugin(r io.Reader) (*Plugin, error) {
	p := &Plugin{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for ln := 1; sc.Scan(); ln++ {
		kind, kv := fields(sc.Text())
		var err error
		switch kind {
		case "":
		case "fsnshare":
			var v int64
			v, err = num(kv, "vcpus")
			p.VCPUs = int(v)
		case "window":
			var w Window
			var seq, tag, vc int64
			for _, f := range []struct {
				k string
				p *int64
			}{{"seq", &seq}, {"tag", &tag}, {"stores", &w.Stores}, {"lines", &w.Lines}, {"shared_writes", &w.SharedWrites},
				{"shared_lines", &w.SharedLines}, {"remote_writes", &w.RemoteWrites}, {"transfers", &w.Transfers}, {"vcpus", &vc}} {
				if *f.p, err = num(kv, f.k); err != nil {
					break
				}
			}
			w.Seq, w.Tag, w.VCPUs, w.TagMismatch = int(seq), int(tag), int(vc), kv["tag_mismatch"] == "1"
			if _, ok := kv["foreign"]; ok && err == nil {
				w.Foreign, err = num(kv, "foreign")
			}
			if err == nil && w.Seq != len(p.Windows)+1 {
				err = fmt.Errorf("window seq=%d after %d windows", w.Seq, len(p.Windows))
			}
			p.Windows = append(p.Windows, w)
		case "hot":
			var h Hot
			var seq int64
			if seq, err = num(kv, "seq"); err == nil && (len(p.Windows) == 0 || int(seq) != p.Windows[len(p.Windows)-1].Seq) {
				err = fmt.Errorf("hot line of window %d out of place", seq)
			}
			if err == nil {
				if h.Line, err = unum(kv, "line"); err == nil {
					if h.Writes, err = num(kv, "writes"); err == nil {
						h.Remote, _ = num(kv, "remote") // absent in records before it was added
						if h.Writers, err = unum(kv, "writers"); err == nil {
							h.PC, err = unum(kv, "pc")
						}
					}
				}
			}
			if err == nil {
				w := &p.Windows[len(p.Windows)-1]
				w.Hot = append(w.Hot, h)
			}
		case "end":
			p.End = sc.Text()
		default:
			err = fmt.Errorf("unknown record %q", kind)
		}
		if err != nil {
			return nil, fmt.Errorf("plugin output line %d: %w", ln, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("plugin output: %w", err)
	}
	return p, nil
}

// Chunk is one line of the guest engine's chunk log: a window it opened.
type Chunk struct {
	Suite, Case string
	Mode        string // gate, aa, inject (the engine's)
	Phase       string // measure; warm (warm-up and calibration blocks, left out of the figures)
	Cond        string // the condition's name
	Tag         int    // the condition's index (0 base, 1 cond): the markers' tag
	Block       int
	Ops         int64 // operations in the window (the chunk's times the clients)
}

// ParseChunks reads the guest engine's chunk log (perf.SharingChunkLine).
func ParseChunks(r io.Reader) ([]Chunk, error) {
	var out []Chunk
	sc := bufio.NewScanner(r)
	for ln := 1; sc.Scan(); ln++ {
		kind, kv := fields(sc.Text())
		if kind == "" {
			continue
		}
		if kind != "chunk" {
			return nil, fmt.Errorf("chunk log line %d: unknown record %q", ln, kind)
		}
		c := Chunk{Suite: kv["suite"], Case: kv["case"], Mode: kv["mode"], Phase: kv["phase"], Cond: kv["cond"]}
		tag, err1 := num(kv, "tag")
		block, err2 := num(kv, "block")
		ops, err3 := num(kv, "ops")
		if err1 != nil || err2 != nil || err3 != nil || c.Suite == "" || c.Case == "" || c.Cond == "" || ops <= 0 {
			return nil, fmt.Errorf("chunk log line %d: malformed: %q", ln, sc.Text())
		}
		c.Tag, c.Block, c.Ops = int(tag), int(block), ops
		out = append(out, c)
	}
	return out, sc.Err()
}
