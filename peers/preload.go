package peers

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// preloadDir holds the copies preload makes, mirroring the root's paths,
// in the boot's RAM (os.TempDir: tmpfs in virtme-ng's guest), complete
// files only (each lands by rename); doneDir one empty file per program
// whose copies are all there.
var (
	preloadDir = filepath.Join(os.TempDir(), "tracebench-peer-preload")
	doneDir    = preloadDir + ".done"
)

// Preload copies the programs p runs, and the shared libraries they load,
// to RAM when the root is on 9p, where each exec pages them in again:
// virtme-ng's guest mounts 9p without a page cache, and bpftrace's 25
// files (271 MB) made its Start on the readpath set 4.4 guest seconds
// instead of 2.0 in the 7.2 guest (~25 s more of the host's time per
// Start under TCG). Start lays the copies
// over the root (overlayfs) in the peer's namespace. Call it before timing
// a Start: the first copy of a boot takes ~20 guest seconds; later calls
// of the boot find it done. On another filesystem it does nothing.
func (p Peer) Preload(root *Root) error {
	_, err := root.preload(p.command(0), p.dlopens)
	return err
}

// preload is Preload of the words of command that name a program on the
// root's PATH and of the libraries dlopens (sonames); it returns
// the directory of the copies, "" if none are needed (the root is not on
// 9p, or nothing names a file: the launcher then lays no overlay). Copies
// land by rename, so processes of one boot may race.
func (r *Root) preload(command, dlopens []string) (string, error) {
	if on, err := r.Preloads(); !on {
		return "", err
	}
	var progs []string
	for _, word := range command {
		if prog, ok := r.program(word); ok {
			progs = append(progs, prog)
		}
	}
	if len(dlopens) > 0 {
		dirs, err := r.libraryDirs()
		if err != nil {
			return "", err
		}
		for _, lib := range dlopens {
			p, err := r.library(lib, dirs)
			if err != nil {
				return "", fmt.Errorf("preloading from the peer root: %w", err)
			}
			progs = append(progs, p)
		}
	}
	dir := ""
	for _, prog := range progs {
		dir = preloadDir
		done := filepath.Join(doneDir, path.Base(prog))
		if _, err := os.Stat(done); err == nil {
			continue
		}
		files, err := r.loads(prog)
		if err != nil {
			return "", fmt.Errorf("preloading %s from the peer root: %w", prog, err)
		}
		for _, f := range files {
			if err := r.copyOut(f); err != nil {
				return "", fmt.Errorf("preloading %s from the peer root: %w", prog, err)
			}
		}
		if err := os.MkdirAll(doneDir, 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(done, nil, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// Preloads says whether Preload copies anything: whether the root is on
// 9p (statfs cannot tell: over 9p it gives the host's filesystem type).
func (r *Root) Preloads() (bool, error) {
	fs, err := filesystem(r.Dir)
	return fs == "9p", err
}

// filesystem is the type of the filesystem dir is on, as
// /proc/self/mountinfo names it: that of the deepest mount point holding
// dir's real path.
func filesystem(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	fs, depth := "", -1
	for _, line := range strings.Split(string(b), "\n") {
		fields, rest, ok := strings.Cut(line, " - ")
		f, r := strings.Fields(fields), strings.Fields(rest)
		if !ok || len(f) < 5 || len(r) < 1 {
			continue
		}
		mount := unescapeMount(f[4])
		if (real == mount || mount == "/" || strings.HasPrefix(real, mount+"/")) && len(mount) > depth {
			fs, depth = r[0], len(mount)
		}
	}
	if depth < 0 {
		return "", fmt.Errorf("%s: on no mount of /proc/self/mountinfo", dir)
	}
	return fs, nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a blank).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// pathDirs are the root's directories of programs, in PATH's order.
var pathDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// program finds name on the root's PATH: its real path in the root.
func (r *Root) program(name string) (string, bool) {
	if name == "" || strings.ContainsAny(name, "/=") {
		return "", false
	}
	for _, d := range pathDirs {
		if p, err := r.real(path.Join(d, name)); err == nil && r.isFile(p) {
			return p, true
		}
	}
	return "", false
}

// loads returns prog and what the dynamic loader maps for it (its
// interpreter and DT_NEEDED libraries, transitively, found in the root's
// ld.so.conf directories, then /lib and /usr/lib), real paths in the root.
// A program that is not ELF (a script) is itself alone.
func (r *Root) loads(prog string) ([]string, error) {
	dirs, err := r.libraryDirs()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{prog: true}
	files, queue := []string{prog}, []string{prog}
	for len(queue) > 0 {
		next, err := r.needs(queue[0], dirs)
		if err != nil {
			return nil, err
		}
		queue = queue[1:]
		for _, f := range next {
			if !seen[f] {
				seen[f] = true
				files, queue = append(files, f), append(queue, f)
			}
		}
	}
	return files, nil
}

// needs is what the loader maps for the ELF file f: its interpreter and
// its DT_NEEDED libraries, each found in dirs (an error names one that is
// not); nothing for a file that is not ELF.
func (r *Root) needs(f string, dirs []string) ([]string, error) {
	e, err := elf.Open(filepath.Join(r.Dir, f))
	var format *elf.FormatError
	if errors.As(err, &format) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer e.Close()
	var out []string
	for _, p := range e.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err != nil {
				return nil, fmt.Errorf("%s: interpreter: %w", f, err)
			}
			interp, err := r.real(strings.TrimRight(string(b), "\x00"))
			if err != nil {
				return nil, fmt.Errorf("%s: interpreter: %w", f, err)
			}
			out = append(out, interp)
		}
	}
	libs, err := e.ImportedLibraries()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	for _, lib := range libs {
		p, err := r.library(lib, dirs)
		if err != nil {
			return nil, fmt.Errorf("%s needs %w", f, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// library finds the shared library lib (a soname) in dirs, as the
// loader does: its real path in the root.
func (r *Root) library(lib string, dirs []string) (string, error) {
	for _, d := range dirs {
		if p, err := r.real(path.Join(d, lib)); err == nil && r.isFile(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s, in none of %s", lib, strings.Join(dirs, " "))
}

// libraryDirs are the directories the root's loader searches: those of
// its /etc/ld.so.conf.d/*.conf, then /lib and /usr/lib.
func (r *Root) libraryDirs() ([]string, error) {
	confs, err := filepath.Glob(filepath.Join(r.Dir, "etc/ld.so.conf.d/*.conf"))
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, c := range confs {
		b, err := os.ReadFile(c)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); strings.HasPrefix(line, "/") {
				dirs = append(dirs, line)
			}
		}
	}
	return append(dirs, "/lib", "/usr/lib"), nil
}

// real resolves p, an absolute path in the root, to the root's file it
// names, following symbolic links as the root's own processes would (an
// absolute target is in the root, not on this system).
func (r *Root) real(p string) (string, error) {
	parts, cur := strings.Split(p, "/"), "/"
	for links := 0; len(parts) > 0; {
		name := parts[0]
		parts = parts[1:]
		if name == "" || name == "." {
			continue
		}
		next := path.Join(cur, name)
		fi, err := os.Lstat(filepath.Join(r.Dir, next))
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > 40 {
			return "", fmt.Errorf("%s: %w", p, syscall.ELOOP)
		}
		target, err := os.Readlink(filepath.Join(r.Dir, next))
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		parts = append(strings.Split(target, "/"), parts...)
	}
	return cur, nil
}

func (r *Root) isFile(p string) bool {
	fi, err := os.Stat(filepath.Join(r.Dir, p))
	return err == nil && fi.Mode().IsRegular()
}

// copyOut copies the root's file f to preloadDir, by rename.
func (r *Root) copyOut(f string) error {
	dst := filepath.Join(preloadDir, f)
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	src, err := os.Open(filepath.Join(r.Dir, f))
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".copy-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
