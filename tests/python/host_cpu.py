"""The host CPU's feature flags, for tests that pick or skip instruction-set paths (the flags line
of /proc/cpuinfo; an empty set where the file has none)."""


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()
