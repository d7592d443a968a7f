#!/usr/bin/env python3
"""discovery_engine_sample.py: the peaks of one call, for discovery_engine.sh.

    discovery_engine_sample.py POSTMASTER_PID DATA_DIR READY_FILE MIN_DISK_MB

Samples the cluster until SIGTERM, then prints one line of peaks, in MB:

    backend_anon backend_shmem backend_sum workers_anon temp_disk cpu_seconds

- backend: the client backend(s) of the cluster ("[local]" in their
  command line; the bench runs one session at a time).  RssAnon is the
  private memory it touched (work_mem, hash tables, sorts); RssShmem the
  shared memory it mapped: dynamic shared memory of a parallel query, and
  also the pages of shared_buffers it touched.  backend_sum is the peak of
  the sum of both, sampled together.
- workers_anon: the sum of RssAnon over the parallel workers ("parallel
  worker for PID") at one time.
- cpu_seconds: the CPU time (user + system) of the backend and of its
  parallel workers, as last sampled before each ended: a figure that the
  load of a shared machine does not inflate as it does the wall clock.
- temp_disk: the bytes of temporary files (everything under a pgsql_tmp
  directory, the shared file sets of parallel queries included) plus the
  files of temporary tables (t<backend>_<relfilenode>*) in the database
  directories.

Memory is sampled every 0.1 s, the disk and the list of processes every
0.2 s (every 0.1 s until the call's backend has been seen).  The file READY_FILE
is created after the first sample, so the caller starts the call once the
sampler is watching.  When the file system of DATA_DIR has less than
MIN_DISK_MB free, the client backends get SIGINT (their query is
cancelled) so that a call that outgrows the disk fails alone.
"""

import os
import signal
import sys
import time


def children(postmaster):
    """{pid: kind} of the postmaster's children: 'backend', 'worker' or other"""
    out = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) != postmaster:
                    continue
            with open("/proc/%s/cmdline" % p) as f:
                cmd = f.read()
        except (OSError, IndexError, ValueError):
            continue
        if "parallel worker for PID" in cmd:
            out[p] = "worker"
        elif "[local]" in cmd:
            out[p] = "backend"
    return out


def cpu_ticks(pid):
    """utime + stime of a process in clock ticks, None once it is gone"""
    try:
        with open("/proc/%s/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def rss(pid):
    """(RssAnon, RssShmem) of a process in kB, (0, 0) once it is gone"""
    anon = shmem = 0
    try:
        with open("/proc/%s/status" % pid) as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    anon = int(line.split()[1])
                elif line.startswith("RssShmem:"):
                    shmem = int(line.split()[1])
    except OSError:
        pass
    return anon, shmem


def temp_bytes(data):
    total = 0
    for top, _, files in os.walk(os.path.join(data, "base")):
        in_tmp = "pgsql_tmp" in top.split(os.sep)
        for f in files:
            if in_tmp or (f.startswith("t") and "_" in f):
                try:
                    total += os.stat(os.path.join(top, f)).st_size
                except OSError:
                    pass
    return total


def main():
    postmaster, data, ready, min_disk = (int(sys.argv[1]), sys.argv[2], sys.argv[3],
                                         int(sys.argv[4]) << 20)
    stopped = []
    signal.signal(signal.SIGTERM, lambda *_: stopped.append(1))
    peak = {"anon": 0, "shmem": 0, "sum": 0, "workers": 0, "temp": 0}
    cpu = {}
    cancelled = False
    i = 0
    kids = {}
    while not stopped:
        # until the call's backend is seen, look for it at every sample
        if i % 2 == 0 or "backend" not in kids.values():
            kids = children(postmaster)
        if i % 2 == 0:
            peak["temp"] = max(peak["temp"], temp_bytes(data))
            st = os.statvfs(data)
            if st.f_bavail * st.f_frsize < min_disk and not cancelled:
                cancelled = True
                for p, kind in kids.items():
                    if kind == "backend":
                        try:
                            os.kill(int(p), signal.SIGINT)
                        except OSError:
                            pass
                print("sampler: free disk below %d MB, query cancelled" % (min_disk >> 20),
                      file=sys.stderr)
        workers = 0
        for p, kind in kids.items():
            anon, shmem = rss(p)
            ticks = cpu_ticks(p)
            if ticks is not None:
                cpu[p] = ticks
            if kind == "backend":
                peak["anon"] = max(peak["anon"], anon)
                peak["shmem"] = max(peak["shmem"], shmem)
                peak["sum"] = max(peak["sum"], anon + shmem)
            else:
                workers += anon
        peak["workers"] = max(peak["workers"], workers)
        if i == 0:
            open(ready, "w").close()
        time.sleep(0.1)
        i += 1
    print("%.0f %.0f %.0f %.0f %.0f %.1f" % (peak["anon"] / 1024, peak["shmem"] / 1024, peak["sum"] / 1024,
                                             peak["workers"] / 1024, peak["temp"] / 1048576,
                                             sum(cpu.values()) / os.sysconf("SC_CLK_TCK")))


if __name__ == "__main__":
    main()
