// Package vm holds the guest runners' shell scripts; its tests run their
// argument checks and kernel selection on the host, with apt faked (no
// guest is booted, nothing is downloaded: each case fails first or finds
// its kernel cached).
package vm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/matrix"
)

// usageExit is the runners' status for a usage error (vm/run.sh's doc).
const usageExit = 125

// runners are the scripts that boot a guest.
var runners = []string{"./run.sh", "./run-initramfs.sh"}

// kernelScripts are the scripts that take a kernel selector.
var kernelScripts = []string{"./kernel.sh", "./kernel-binary.sh"}

// runScript runs a vm/ script with env added and returns its combined
// output and exit status.
func runScript(t *testing.T, env []string, script string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(script, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %q: %v", script, args, err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

func TestRunnersRefuseBadArguments(t *testing.T) {
	for _, runner := range runners {
		for _, tc := range []struct {
			args []string
			says string
		}{
			{[]string{"--memory", "0"}, "memory size '0' is below"},
			{[]string{"--memory", "100M"}, "memory size '100M' is below"},
			{[]string{"--memory", "9999999G"}, "'9999999G' is more than 4x this host's"},
			{[]string{"--memory", "2X"}, "invalid memory size '2X'"},
			{[]string{"--cpus", "0"}, "invalid CPU count '0'"},
			{[]string{"--cpus", "100000"}, "invalid CPU count '100000'"},
			{[]string{"--memory"}, "--memory needs a value"},
			{[]string{"--cpus", "--"}, "--cpus needs a value"},
			{[]string{"--timeout", "soon"}, "invalid timeout 'soon'"},
			{[]string{"--env", "1X=3"}, "--env '1X=3': '1X' is not a variable name"},
			{[]string{"--env", "A B"}, "'A B' is not a variable name"},
			{[]string{"--bogus", "x"}, "unexpected argument '--bogus'"},
			{[]string{"--verbose"}, "no command given"},
		} {
			t.Run(runner+" "+tc.args[0], func(t *testing.T) {
				// A kernel that does not exist: should the refusal regress,
				// the runner fails there instead of booting a guest.
				args := append([]string{"--kernel", "/nonexistent/vmlinuz"}, tc.args...)
				if len(tc.args) > 1 {
					args = append(args, "--", "sh")
				}
				out, code := runScript(t, nil, runner, args...)
				assert.Equal(t, usageExit, code, "%s %q: %s", runner, args, out)
				assert.Contains(t, out, tc.says)
			})
		}
	}
}

// TestExitProtocol: what both runners exit with once the guest is gone,
// from the status file the guest command wrote (the initramfs runner's
// comes through a serial port, CR and all), timeout(1)'s status and
// whether there was a timeout.
func TestExitProtocol(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		status      string // "-" for no file
		rc, timeout string
		exit        int
		says        string
	}{
		{"0\n", "0", "0", 0, "guest command exited with status 0"},
		{"3\r\n", "0", "600", 3, "guest command exited with status 3"},
		{"255\n", "255", "0", 255, "guest command exited with status 255"},
		{"124\n", "124", "600", 124, "guest command exited with status 124"},
		{"-", "124", "600", 124, "guest killed after the 600s timeout"},
		{"", "124", "600", 124, "guest killed after the 600s timeout"},
		{"-", "124", "0", 125, "error: no status"},
		{"-", "255", "600", 125, "error: no status"},
	} {
		file := filepath.Join(dir, "status")
		os.Remove(file)
		if tc.status != "-" {
			write(t, file, tc.status, 0o644)
		}
		cmd := exec.Command("bash", "-c", `source ./lib.sh && TIMEOUT=$3 && exit_if_reported "$1" "$2" "$SECONDS" label && no_status "no status"`,
			"_", file, tc.rc, tc.timeout)
		out, _ := cmd.CombinedOutput()
		assert.Equal(t, tc.exit, cmd.ProcessState.ExitCode(), "%+v: %s", tc, out)
		assert.Contains(t, string(out), tc.says, "%+v", tc)
	}
}

// TestUsageIsTheHeader: --help prints the script's header comment and
// exits 0 (the reproductions' in repro/ too); a runner's usage error
// prints it too, with status 125.
func TestUsageIsTheHeader(t *testing.T) {
	scripts, err := filepath.Glob("*.sh")
	require.NoError(t, err)
	repros, err := filepath.Glob("repro/*.sh")
	require.NoError(t, err)
	require.NotEmpty(t, repros)
	scripts = append(scripts, repros...)
	env := []string{"TRACEBENCH_CACHE=" + t.TempDir()}
	for _, script := range scripts {
		if script == "lib.sh" {
			continue // sourced, not run
		}
		header := headerComment(t, script)
		require.True(t, strings.HasPrefix(header, "vm/"+script+" "), "%s's header starts with its usage line: %q", script, header)
		out, code := runScript(t, env, "./"+script, "--help")
		assert.Equal(t, 0, code, "%s --help: %s", script, out)
		assert.Equal(t, header, out, "%s --help", script)
	}
	for _, runner := range runners {
		out, code := runScript(t, env, runner, "--bogus")
		assert.Equal(t, usageExit, code, "%s --bogus: %s", runner, out)
		assert.True(t, strings.HasSuffix(out, headerComment(t, runner)), "%s --bogus ends with the usage: %q", runner, out)
	}
}

// headerComment returns the comment lines after script's #! line, up to
// the first other line, without their "#" and one space.
func headerComment(t *testing.T, script string) string {
	f, err := os.Open(script)
	require.NoError(t, err)
	defer f.Close()
	var b strings.Builder
	lines := bufio.NewScanner(f)
	lines.Scan() // #!
	for lines.Scan() && strings.HasPrefix(lines.Text(), "#") {
		line := strings.TrimPrefix(lines.Text(), "#")
		b.WriteString(strings.TrimPrefix(line, " ") + "\n")
	}
	require.NoError(t, lines.Err())
	return b.String()
}

// TestVersionMatches is lib.sh's rule for a selector's VERSION: the whole
// ABI name, or its start up to a separator.
func TestVersionMatches(t *testing.T) {
	for _, tc := range []struct {
		version, abi string
		matches      bool
	}{
		{"7", "7.2.13+deb14-amd64", true},
		{"7.2", "7.2.13+deb14-amd64", true},
		{"7.2.13", "7.2.13+deb14-amd64", true},
		{"7.2.13+deb14", "7.2.13+deb14-amd64", true},
		{"7.2.13+deb14-amd64", "7.2.13+deb14-amd64", true},
		{"7.3", "7.3~rc4-amd64", true},
		{"6.1", "6.1.0-47-amd64", true},
		{"6.1.0", "6.1.0-47-amd64", true},
		{"7.2", "7.20.1+deb14-amd64", false},
		{"7", "70.1-amd64", false},
		{"6.1", "6.12.48+deb13-amd64", false},
		{"7.2.1", "7.2.13+deb14-amd64", false},
		{"7.2.13+deb14-amd", "7.2.13+deb14-amd64", false},
		{"7.2.13+deb14-amd64", "7.2.13+deb14-amd64-unsigned", true},
	} {
		cmd := exec.Command("bash", "-c", `source ./lib.sh && version_matches "$1" "$2"`, "_", tc.version, tc.abi)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		require.True(t, err == nil || errors.As(err, &exit) && exit.ExitCode() == 1, "%+v: %v: %s", tc, err, out)
		assert.Equal(t, tc.matches, err == nil, "version %q, ABI %q", tc.version, tc.abi)
	}
}

// fakeABIs are the kernels the fake apt lists: each with the split
// layout's three packages, so both kernel scripts can take any of them.
var fakeABIs = []string{
	"7.20.1+deb14-amd64", "7.3~rc4-amd64", "7.2.13+deb14-amd64", "7.2.9+deb14-amd64",
	"7.2.13+deb14-rt-amd64", "7.2.13+deb14-arm64", "7.0.13+deb13-amd64", "6.12.48+deb13-amd64",
	"6.1.0-47-amd64", "7.2.13+deb14-powerpc64le-64k", "7.2.13+deb14-powerpc64le", "7.2.13+deb14-s390x",
}

// fakeApt returns the environment of a kernel script run against a fake
// apt listing fakeABIs, each already cached by both kernel scripts: a
// script that selects one prints its directory without a download.
func fakeApt(t *testing.T) (env []string, cache string) {
	dir := t.TempDir()
	cache = filepath.Join(dir, "cache")
	var pkgs []string
	for _, abi := range fakeABIs {
		pkgs = append(pkgs, "linux-binary-"+abi, "linux-modules-"+abi, "linux-base-"+abi)
		for _, kernels := range []string{"kernels", "kernels-binary-only"} {
			write(t, filepath.Join(cache, kernels, abi, "tracebench-kernel.env"), "ABI="+abi+"\n", 0o644)
		}
	}
	pkgs = append(pkgs, "linux-image-amd64", "linux-binary-7.2.13+deb14-amd64-dbg")
	write(t, filepath.Join(dir, "packages"), strings.Join(pkgs, "\n")+"\n", 0o644)
	write(t, filepath.Join(dir, "keyring.gpg"), "", 0o644)
	write(t, filepath.Join(dir, "debian.sources"),
		"Types: deb\nURIs: http://mirror.invalid/debian\nSuites: bookworm\nSigned-By: "+dir+"/keyring.gpg\n", 0o644)
	bin := filepath.Join(dir, "bin")
	// apt-cache -c CONF pkgnames PREFIX | show --no-all-versions PKG
	write(t, filepath.Join(bin, "apt-cache"), `#!/bin/sh
pkgs="$FAKE_APT/packages"
case "$3" in
pkgnames) grep "^$4" "$pkgs" ;;
show) grep -qxF -- "$5" "$pkgs" || { echo "E: No packages found" >&2; exit 100; }
	printf 'Package: %s\nVersion: 1\nFilename: pool/main/%s.deb\n\n' "$5" "$5" ;;
*) echo "fake apt-cache: unexpected $*" >&2; exit 2 ;;
esac
`, 0o755)
	write(t, filepath.Join(bin, "apt-get"), `#!/bin/sh
[ "$4" = update ] || { echo "fake apt-get: unexpected $*" >&2; exit 2; }
`, 0o755)
	write(t, filepath.Join(bin, "dpkg"), "#!/bin/sh\n[ \"$1\" = --print-architecture ] && echo amd64\n", 0o755)
	for _, tool := range []string{"dpkg-deb", "depmod", "flock"} {
		write(t, filepath.Join(bin, tool), "#!/bin/sh\n", 0o755)
	}
	return []string{
		"PATH=" + bin + ":" + os.Getenv("PATH"), "FAKE_APT=" + dir, "TRACEBENCH_CACHE=" + cache,
		"TRACEBENCH_SYSTEM_SOURCES=" + filepath.Join(dir, "debian.sources"),
		// The defaults, whatever the caller's environment says.
		"TRACEBENCH_KERNEL_SUITE=", "TRACEBENCH_KERNEL_VERSION=", "TRACEBENCH_KERNEL_FLAVOUR=",
	}, cache
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), mode))
}

// TestKernelScriptsSelectAlike: vm/kernel.sh and vm/kernel-binary.sh take
// a selector the same way and pick the same kernel for it.
func TestKernelScriptsSelectAlike(t *testing.T) {
	env, cache := fakeApt(t)
	for _, tc := range []struct {
		args []string
		abi  string
	}{
		{[]string{"sid:7"}, "7.20.1+deb14-amd64"},
		{[]string{"sid:7.2"}, "7.2.13+deb14-amd64"},
		{[]string{"sid:7.2.9"}, "7.2.9+deb14-amd64"},
		{[]string{"sid:7.3"}, "7.3~rc4-amd64"},
		{[]string{"sid:6.1"}, "6.1.0-47-amd64"},
		{[]string{"sid:6.1.0"}, "6.1.0-47-amd64"},
		{[]string{"sid:7.2.13+deb14-amd64"}, "7.2.13+deb14-amd64"},
		{[]string{"sid:7:rt-amd64"}, "7.2.13+deb14-rt-amd64"},
		{[]string{"sid:7:arm64"}, "7.2.13+deb14-arm64"},
		{[]string{"sid:7:powerpc64le"}, "7.2.13+deb14-powerpc64le"},
		{[]string{"sid:7:powerpc64le-64k"}, "7.2.13+deb14-powerpc64le-64k"},
		{[]string{"sid:7.2:s390x"}, "7.2.13+deb14-s390x"},
		{[]string{"--suite", "sid", "--version=7.2", "--flavour", "rt-amd64"}, "7.2.13+deb14-rt-amd64"},
		{[]string{"--version", "7.0", "sid"}, "7.0.13+deb13-amd64"},
		{nil, "7.20.1+deb14-amd64"},
	} {
		for _, script := range kernelScripts {
			out, code := runScript(t, env, script, tc.args...)
			require.Equal(t, 0, code, "%s %q: %s", script, tc.args, out)
			kernels := map[string]string{"./kernel.sh": "kernels", "./kernel-binary.sh": "kernels-binary-only"}[script]
			lines := strings.Split(strings.TrimSpace(out), "\n")
			assert.Equal(t, filepath.Join(cache, kernels, tc.abi), lines[len(lines)-1], "%s %q: %s", script, tc.args, out)
		}
	}
}

// A bad or conflicting selector is refused by both, naming it, and so is
// a version no kernel of the suite matches.
func TestKernelScriptsRefuseAlike(t *testing.T) {
	env, _ := fakeApt(t)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"sid", "trixie:6.12"}, "conflicting kernel suite: 'sid' and 'trixie'"},
		{[]string{"--version", "7", "sid:6.12"}, "conflicting kernel version selector: '7' and '6.12'"},
		{[]string{"sid:7:arm64", "--flavour=rt-amd64"}, "conflicting kernel flavour: 'arm64' and 'rt-amd64'"},
		{[]string{"sid:"}, "no kernel version selector given (got '')"},
		{[]string{"sid:7:"}, "no kernel flavour given (got '')"},
		{[]string{":7"}, "no kernel suite given (got '')"},
		{[]string{"sid:7.2", "--suite"}, "no kernel suite given (got '')"},
		{[]string{"--suite", "--version", "7"}, "no kernel suite given (got '--version')"},
		{[]string{"Sid:7"}, "invalid Debian suite name 'Sid'"},
		{[]string{"sid:v7"}, "invalid kernel version selector 'v7'"},
		{[]string{"sid:7:rt:amd64"}, "invalid kernel flavour 'rt:amd64'"},
		{[]string{"sid:7.1"}, "matching version '7.1' in suite 'sid'"},
		{[]string{"sid:7.2.1"}, "matching version '7.2.1' in suite 'sid'"},
		{[]string{"sid:7.2:cloud-amd64"}, "cloud-amd64 kernel"},
		{[]string{"sid:7:ppc64el"}, "kernel flavour 'ppc64el' names no architecture tracebench runs on"},
		{[]string{"sid:7:64k"}, "kernel flavour '64k' names no architecture"},
	} {
		for _, script := range kernelScripts {
			out, code := runScript(t, env, script, tc.args...)
			assert.Equal(t, 1, code, "%s %q: %s", script, tc.args, out)
			assert.Contains(t, out, tc.says, "%s %q", script, tc.args)
		}
	}
}

// Every kernel of matrix/kernels.tsv is a selector the kernel scripts
// take (lib.sh's parse_kernel_args), read as package matrix reads it: the
// same suite, version and flavour, and the same architecture.
func TestKernelsTSVSelectorsParse(t *testing.T) {
	env, _ := fakeApt(t)
	f, err := os.Open("../matrix/kernels.tsv")
	require.NoError(t, err)
	defer f.Close()
	exp, err := matrix.ParseExpectations(f)
	require.NoError(t, err)
	for _, k := range exp.Kernels {
		cmd := exec.Command("bash", "-c", `source ./lib.sh && parse_kernel_args no_option "$1" &&
			echo "$SEL_SUITE:$SEL_VERSION:$SEL_FLAVOUR ${APT_ARCH:-host}"`, "_", k.Selector)
		cmd.Env = append(append(os.Environ(), env...), "APT_ARCH=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s", k.Selector, out)
		selector, arch, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
		if strings.Count(k.Selector, ":") == 1 {
			assert.Equal(t, k.Selector+":"+matrix.HostArch, selector, "%s: the default flavour", k.Selector)
		} else {
			assert.Equal(t, k.Selector, selector)
		}
		if arch == "host" {
			arch = matrix.HostArch
		}
		assert.Equal(t, k.Arch().Debian, arch, "%s: the architecture lib.sh lists the kernel for", k.Selector)
	}
}

// flavourArch runs lib.sh's flavour_arch: the Debian architecture, or
// the error it fails with.
func flavourArch(t *testing.T, flavour string) (arch string, err error) {
	cmd := exec.Command("bash", "-c", `source ./lib.sh && flavour_arch "$1" && echo "$FLAVOUR_ARCH"`, "_", flavour)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("flavour_arch %q: %v", flavour, err)
	}
	if err != nil {
		return "", errors.New(strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// TestFlavourArch: lib.sh's rule gives every kernel flavour Debian builds
// for the architectures tracebench runs on (sid's lists, 2026-12) its
// Debian architecture, as package matrix's FlavourArch does, and refuses
// the flavours of others and names that are not flavours.
func TestFlavourArch(t *testing.T) {
	for flavour, want := range map[string]string{
		"amd64": "amd64", "rt-amd64": "amd64", "cloud-amd64": "amd64",
		"arm64": "arm64", "arm64-16k": "arm64", "rt-arm64": "arm64", "cloud-arm64": "arm64",
		"powerpc64le": "ppc64el", "powerpc64le-64k": "ppc64el",
		"riscv64": "riscv64", "s390x": "s390x",
	} {
		arch, err := flavourArch(t, flavour)
		require.NoError(t, err, flavour)
		assert.Equal(t, want, arch, flavour)
		a, err := matrix.FlavourArch(flavour)
		require.NoError(t, err, flavour)
		assert.Equal(t, want, a.Debian, "matrix.FlavourArch(%q)", flavour)
	}
	for flavour, says := range map[string]string{
		"armmp":       "kernel flavour 'armmp' names no architecture tracebench runs on (known: amd64, arm64, powerpc64le (ppc64el), riscv64, s390x)",
		"rt-686-pae":  "kernel flavour 'rt-686-pae' names no architecture",
		"ppc64el":     "kernel flavour 'ppc64el' names no architecture", // an architecture, not a flavour
		"64k":         "kernel flavour '64k' names no architecture",
		"amd64-arm64": "kernel flavour 'amd64-arm64' names more than one architecture (amd64 arm64)",
	} {
		_, err := flavourArch(t, flavour)
		assert.ErrorContains(t, err, says, flavour)
		_, err = matrix.FlavourArch(flavour)
		assert.Error(t, err, "matrix.FlavourArch(%q)", flavour)
	}
}

// TestScriptsReadTheArchTable: what the scripts derive from the one list
// of architectures (internal/arches' table, matrix.Arches) agrees with it:
// lib.sh's FLAVOUR_ARCHES and deps.sh's ARCH_PKGS hold its rows and no
// other, and run-initramfs.sh has a QEMU machine for each.
func TestScriptsReadTheArchTable(t *testing.T) {
	const script = `source ./deps.sh && source ./run-initramfs.sh &&
echo "${#FLAVOUR_ARCHES[@]} ${#ARCH_PKGS[@]}" &&
while (($#)); do qemu_cmd "$1" vmlinuz /tmp 1G 1; echo "${FLAVOUR_ARCHES[$2]} ${ARCH_PKGS[$1]} ${QEMU[0]}"; shift 2; done`
	args := []string{"-c", script, "_"}
	var want []string
	for _, a := range matrix.Arches {
		args = append(args, a.Debian, a.Flavour)
		want = append(want, a.Debian+" "+a.QEMUPackage+" ")
	}
	out, err := exec.Command("bash", args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	n := strconv.Itoa(len(matrix.Arches))
	assert.Equal(t, n+" "+n, lines[0], "FLAVOUR_ARCHES and ARCH_PKGS hold one entry per architecture")
	require.Len(t, lines, len(want)+1)
	for i, w := range want {
		assert.True(t, strings.HasPrefix(lines[i+1], w), "want %q..., qemu_cmd's binary after it; got %q", w, lines[i+1])
		assert.Regexp(t, ` qemu-system-\S+$`, lines[i+1], "qemu_cmd %s", matrix.Arches[i].Debian)
	}
}

// TestKernelScriptsSideBySide: callers started together (bench's guests,
// parallel test jobs) each find their kernel; none moves another's
// half-written apt configuration, even without the cache's lock (the fake
// flock takes none).
func TestKernelScriptsSideBySide(t *testing.T) {
	env, cache := fakeApt(t)
	const callers = 12
	type result struct {
		out  string
		exit int
	}
	results := make(chan result, callers)
	for range callers {
		go func() {
			cmd := exec.Command("./kernel.sh", "sid:7.2.13")
			cmd.Env = append(os.Environ(), env...)
			out, _ := cmd.CombinedOutput()
			results <- result{string(out), cmd.ProcessState.ExitCode()}
		}()
	}
	for range callers {
		r := <-results
		assert.Equal(t, 0, r.exit, r.out)
		assert.Contains(t, r.out, filepath.Join(cache, "kernels", "7.2.13+deb14-amd64"))
	}
	leftover, err := filepath.Glob(filepath.Join(cache, "apt-sid", ".*"))
	require.NoError(t, err)
	assert.Empty(t, leftover, "temporary files left in the apt directory")
}

// A signal to a runner's process group, as a Ctrl-C sends, reaches the
// command with_timeout runs, although timeout(1) puts it in a group of
// its own: no guest outlives the runner.
func TestWithTimeoutPassesSignalsOn(t *testing.T) {
	dir := t.TempDir()
	pidFile, rcFile := filepath.Join(dir, "pid"), filepath.Join(dir, "rc")
	// As vm/run.sh boots: in a pipeline (whose cat the signal kills too).
	cmd := exec.Command("bash", "-c", `source ./lib.sh && trap 'exit 143' TERM && TIMEOUT=60 && `+
		`{ with_timeout sh -c 'echo $$ >"$1.tmp"; mv "$1.tmp" "$1"; exec sleep 60' sh "$1"; echo "$?" >"$2"; } | cat`, "_", pidFile, rcFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	var pid int
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL) // left by a runner that failed
		}
		cmd.Wait()
	})
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		_, scanErr := fmt.Sscan(string(b), &pid)
		return err == nil && scanErr == nil
	}, 10*time.Second, 20*time.Millisecond, "the command did not start")
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the runner did not end within 10 s of SIGTERM: %s", out.String())
	}
	rc, err := os.ReadFile(rcFile)
	require.NoError(t, err, "with_timeout did not return: %s", out.String())
	assert.Equal(t, "143\n", string(rc), "timeout passed SIGTERM on, and its status is the command's")
	assert.Equal(t, 143, cmd.ProcessState.ExitCode(), "then the caller's trap ran")
	assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "the command (pid %d) outlived the runner", pid)
}

// TestWithTimeoutEndsAHungBoot: with BOOT_MARK set, a command that has not
// created it within BOOT_LIMIT seconds is ended long before TIMEOUT and
// BOOT_MARK.hung says so; one that created it runs on past the limit.
func TestWithTimeoutEndsAHungBoot(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		rc           string
		hung         bool
	}{
		{"hung", `exec sleep 60`, "143", true},
		{"started", `: >"$1"; sleep 3; exit 7`, "7", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mark := filepath.Join(t.TempDir(), "started")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", `source ./lib.sh && TIMEOUT=60 BOOT_LIMIT=2 BOOT_MARK="$1" && `+
				`{ with_timeout sh -c "$2" sh "$1" && echo 0 || echo "$?"; } | cat`, "_", mark, tc.script)
			cmd.WaitDelay = time.Second // past ctx, not until the command's sleep ends
			start := time.Now()
			out, err := cmd.Output()
			require.NoError(t, err, "the runner: %s", out)
			assert.Equal(t, tc.rc+"\n", string(out), "with_timeout's status")
			assert.Less(t, time.Since(start), 20*time.Second, "ended by the boot limit, not TIMEOUT")
			_, err = os.Stat(mark + ".hung")
			assert.Equal(t, tc.hung, err == nil, "BOOT_MARK.hung: %v", err)
		})
	}
}
