package funcset

import "errors"

// ErrNotRefusal, wrapped by an attach function's error, says the attempt
// failed for a reason that is not the kernel refusing a function of the
// set (no memory, an interrupted call): Bisect stops with it.
var ErrNotRefusal = errors.New("not a refusal of a function")

// Bisect finds the functions of names the kernel refuses where it refuses
// a whole set for one of them (a tracing_multi or kprobe_multi link):
// attach tries set at once and undoes it, returning nil or the kernel's
// error. A refused set is halved until the refused functions stand alone;
// each set that attaches is cleared whole, so every function is attached
// once and refusals cost about log2(len(names)) attempts each. It returns
// the refused functions with the error of their attempt alone.
func Bisect(names []string, attach func(set []string) error) (map[string]error, error) {
	refused := map[string]error{}
	var try func(set []string) error
	try = func(set []string) error {
		err := attach(set)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ErrNotRefusal):
			return err
		case len(set) == 1:
			refused[set[0]] = err
			return nil
		}
		half := len(set) / 2
		if err := try(set[:half]); err != nil {
			return err
		}
		return try(set[half:])
	}
	if len(names) == 0 {
		return refused, nil
	}
	return refused, try(names)
}
