#!/usr/bin/env tclsh
# SPDX-License-Identifier: BSD-2-Clause
# combat_client.tcl -- a Bench client written with Combat, the pure-Tcl CORBA ORB (Debian
# tcl-combat), so that the integration tests also capture the GIOP of an ORB that is not
# omniORB.
#
#   tclsh tests/orb/combat_client.tcl [-ORB<option> <value>]... -i IORFILE [-d DEADIORFILE]
#         [-idl tests/orb/bench.idl | -ir FILE.tcl] [-emit-ir FILE.tcl]
#         -op echoString|echoOctets|echoRecs|slow|fire|fail|dead|nonexist|mix
#         [-size N] [-n N] [-lat FILE.csv] [-q]
#
# Combat needs the interface descriptions (its "IR") to marshal calls. idl2tcl makes them only
# with a separate Interface Repository (MICO ird, TAO, ORBacus), which Debian does not ship, so
# by default this script reads the IDL itself (-idl, default: bench.idl next to this script)
# with the small IDL-to-Combat-IR translator below, which knows the subset of IDL that
# bench.idl uses (modules, structs, exceptions, typedefs, sequences, strings, interfaces,
# operations with oneway/raises, attributes). -emit-ir writes the generated Tcl IR file (the
# same "combat::ir add" form idl2tcl produces); -ir sources such a file instead of parsing.
#
# Options and output are those of bench_client (client.cc): -n calls (one thread), -lat one
# CSV row per call: thread,seq,op,size,t_start_ns,t_end_ns,latency_ns,outcome (Tcl has a
# microsecond clock: t_*_ns are multiples of 1000), "client: calls=N bad=N" on stderr, exit 1
# if any call was bad, 2 on usage errors. mix cycles echoString fire fail echoOctets fire dead
# slow echoRecs nonexist (dead is skipped, i.e. replaced by echoString, without -d).
#
# What Combat does on the wire (see tests/orb/README.md): it speaks the GIOP version of the
# IOR's IIOP profile, capped at 1.2 (GIOP 1.2 against omniORB 4.2), sends no LocateRequest
# before the first call, and the Tcl socket does not set TCP_NODELAY.

package require combat

# ---------------------------------------------------------------- a small IDL translator
namespace eval idl {
    variable toks {}
    variable pos 0
    variable names        ;# array: absolute scoped name (A::B) -> repository id
    array set names {}
    variable maxdepth 32

    proc fail {msg} {
        variable toks
        variable pos
        error "IDL: $msg near token [expr {$pos + 1}] '[lindex $toks $pos]'"
    }
    proc peek {{k 0}} {
        variable toks
        variable pos
        return [lindex $toks [expr {$pos + $k}]]
    }
    proc next {} {
        variable toks
        variable pos
        if {$pos >= [llength $toks]} { fail "unexpected end of file" }
        set t [lindex $toks $pos]
        incr pos
        return $t
    }
    proc expect {want} {
        set t [next]
        if {$t ne $want} { fail "expected '$want', got '$t'" }
    }
    proc ident {} {
        set t [next]
        if {![regexp {^[A-Za-z_][A-Za-z0-9_]*$} $t]} { fail "expected an identifier, got '$t'" }
        return $t
    }
    proc repoid {scope name} {
        set path [concat $scope [list $name]]
        return "IDL:[join $path /]:1.0"
    }
    proc declare {scope name} {
        variable names
        set id [repoid $scope $name]
        set names([join [concat $scope [list $name]] ::]) $id
        return $id
    }
    # a scoped name used inside scope -> repository id (search the enclosing scopes outwards)
    proc resolve {scope sname} {
        variable names
        if {[string match ::* $sname]} {
            set key [string range $sname 2 end]
            if {[info exists names($key)]} { return $names($key) }
            fail "unknown type '$sname'"
        }
        for {set i [llength $scope]} {$i >= 0} {incr i -1} {
            set key [join [concat [lrange $scope 0 [expr {$i - 1}]] [list $sname]] ::]
            if {[info exists names($key)]} { return $names($key) }
        }
        fail "unknown type '$sname'"
    }
    proc type {scope} {
        set t [next]
        switch -- $t {
            unsigned {
                set u [next]
                if {$u eq "long" && [peek] eq "long"} { next; return "unsigned long long" }
                if {$u ne "long" && $u ne "short"} { fail "bad unsigned type" }
                return "unsigned $u"
            }
            long {
                if {[peek] eq "long"} { next; return "long long" }
                if {[peek] eq "double"} { next; return "long double" }
                return long
            }
            short - float - double - boolean - char - wchar - octet - any - Object - void {
                return $t
            }
            string - wstring {
                if {[peek] eq "<"} {
                    next
                    set n [next]
                    expect ">"
                    return [list $t $n]
                }
                return $t
            }
            sequence {
                expect "<"
                set el [type $scope]
                if {[peek] eq ","} {
                    next
                    set n [next]
                    expect ">"
                    return [list sequence $el $n]
                }
                expect ">"
                return [list sequence $el]
            }
            default {
                if {$t eq "::"} {
                    set name "::[ident]"
                } elseif {[regexp {^[A-Za-z_][A-Za-z0-9_]*$} $t]} {
                    set name $t
                } else {
                    fail "expected a type, got '$t'"
                }
                while {[peek] eq "::"} { next; append name "::" [ident] }
                return [resolve $scope $name]
            }
        }
    }
    proc members {scope} {
        set ms {}
        expect "\{"
        while {[peek] ne "\}"} {
            set ty [type $scope]
            while 1 {
                lappend ms [list [ident] $ty]
                if {[peek] eq ","} { next; continue }
                break
            }
            expect ";"
        }
        expect "\}"
        return $ms
    }
    proc operation {scope} {
        set oneway 0
        if {[peek] eq "oneway"} { next; set oneway 1 }
        set rt [type $scope]
        set name [ident]
        set id [repoid $scope $name]
        expect "("
        set params {}
        while {[peek] ne ")"} {
            set dir [next]
            if {$dir ni {in out inout}} { fail "expected in/out/inout" }
            set pt [type $scope]
            lappend params [list $dir [ident] $pt]
            if {[peek] eq ","} { next }
        }
        expect ")"
        set raises {}
        if {[peek] eq "raises"} {
            next
            expect "("
            while {[peek] ne ")"} {
                set n [next]
                while {[peek] eq "::"} { next; append n "::" [ident] }
                lappend raises [resolve $scope $n]
                if {[peek] eq ","} { next }
            }
            expect ")"
        }
        expect ";"
        set item [list operation [list $id $name 1.0] $rt $params $raises]
        if {$oneway} { lappend item oneway }
        return $item
    }
    # definitions up to the closing brace of the scope (or the end of the file at depth 0)
    proc definitions {scope depth {ininterface 0}} {
        variable maxdepth
        if {$depth > $maxdepth} { fail "nesting too deep" }
        set items {}
        while {[peek] ne "" && [peek] ne "\}"} {
            set kw [peek]
            switch -- $kw {
                module {
                    next
                    set name [ident]
                    set id [declare $scope $name]
                    expect "\{"
                    set sub [definitions [concat $scope [list $name]] [expr {$depth + 1}]]
                    expect "\}"
                    expect ";"
                    lappend items [list module [list $id $name 1.0] $sub]
                }
                struct {
                    next
                    set name [ident]
                    set id [declare $scope $name]
                    set ms [members [concat $scope [list $name]]]
                    expect ";"
                    lappend items [list struct [list $id $name 1.0] $ms {}]
                }
                exception {
                    next
                    set name [ident]
                    set id [declare $scope $name]
                    set ms [members [concat $scope [list $name]]]
                    expect ";"
                    lappend items [list exception [list $id $name 1.0] $ms {}]
                }
                typedef {
                    next
                    set ty [type $scope]
                    while 1 {
                        set name [ident]
                        set id [declare $scope $name]
                        lappend items [list typedef [list $id $name 1.0] $ty]
                        if {[peek] eq ","} { next; continue }
                        break
                    }
                    expect ";"
                }
                interface {
                    next
                    set name [ident]
                    set id [declare $scope $name]
                    if {[peek] eq ";"} { next; continue }   ;# forward declaration
                    set bases {}
                    if {[peek] eq ":"} {
                        next
                        while 1 {
                            set b [next]
                            while {[peek] eq "::"} { next; append b "::" [ident] }
                            lappend bases [resolve $scope $b]
                            if {[peek] eq ","} { next; continue }
                            break
                        }
                    }
                    expect "\{"
                    set body [definitions [concat $scope [list $name]] [expr {$depth + 1}] 1]
                    expect "\}"
                    expect ";"
                    lappend items [list interface [list $id $name 1.0] $bases $body]
                }
                readonly - attribute {
                    if {!$ininterface} { fail "attribute outside an interface" }
                    set ro 0
                    if {$kw eq "readonly"} { next; set ro 1 }
                    expect attribute
                    set ty [type $scope]
                    set name [ident]
                    expect ";"
                    set item [list attribute [list [repoid $scope $name] $name 1.0] $ty]
                    if {$ro} { lappend item readonly }
                    lappend items $item
                }
                default {
                    if {!$ininterface} { fail "unsupported IDL construct '$kw'" }
                    lappend items [operation $scope]
                }
            }
        }
        return $items
    }
    # IDL text -> the list that "combat::ir add" takes
    proc translate {text} {
        variable toks
        variable pos
        # comments and preprocessor lines out
        regsub -all {/\*.*?\*/} $text " " text
        regsub -all -line {//.*$} $text " " text
        regsub -all -line {^\s*#.*$} $text " " text
        set toks [regexp -all -inline {::|[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[{}()<>;,:=]} $text]
        set pos 0
        set items [definitions {} 0]
        if {$pos != [llength $toks]} { fail "unexpected '[peek]'" }
        return $items
    }
}

# ---------------------------------------------------------------- client
proc usage {{why ""}} {
    if {$why ne ""} { puts stderr "combat_client: $why" }
    puts stderr "usage: combat_client.tcl \[-ORB<option> <value>\]... -i IORFILE \[-d DEADIORFILE\]\
        \[-idl FILE.idl | -ir FILE.tcl\] \[-emit-ir FILE.tcl\]\
        -op echoString|echoOctets|echoRecs|slow|fire|fail|dead|nonexist|mix\
        \[-size N\] \[-n N\] \[-lat FILE.csv\] \[-q\]"
    exit 2
}

proc read_ior {path} {
    if {[catch {open $path r} f]} { puts stderr "combat_client: $f"; exit 2 }
    set s [string trim [read $f 1048576]]
    close $f
    return $s
}

proc now_ns {} { return [expr {[clock microseconds] * 1000}] }

# returns {outcome ok}
proc do_call {op size seq} {
    global echo dead
    switch -- $op {
        echoString {
            set s ""
            for {set i 0} {$i < $size} {incr i} {
                append s [format %c [expr {97 + ($i + $seq) % 26}]]
            }
            if {[catch {$echo echoString $s} r]} { return [list [exname $r] 0] }
            return [list NO_EXCEPTION [expr {$r eq $s}]]
        }
        echoOctets {
            set b [string repeat [binary format c [expr {$seq % 128}]] $size]
            if {[catch {$echo echoOctets $b} r]} { return [list [exname $r] 0] }
            return [list NO_EXCEPTION [expr {$r eq $b}]]
        }
        echoRecs {
            set v {}
            for {set i 0} {$i < $size} {incr i} {
                lappend v [list a [expr {$i + $seq}] b [expr {$i * 0.5}] c [expr {$i & 0x7fff}]]
            }
            if {[catch {$echo echoRecs $v} r]} { return [list [exname $r] 0] }
            set ok [expr {[llength $r] == $size}]
            if {$ok && $size > 0} {
                array set last [lindex $r end]
                set ok [expr {$last(a) == $size - 1 + $seq}]
            }
            return [list NO_EXCEPTION $ok]
        }
        slow {
            if {[catch {$echo slow $size} r]} { return [list [exname $r] 0] }
            return [list NO_EXCEPTION 1]
        }
        fire {
            if {[catch {$echo fire [string repeat f $size]} r]} { return [list [exname $r] 0] }
            return [list ONEWAY 1]
        }
        fail {
            if {[catch {$echo fail $size} r]} {
                set o [exname $r]
                set ok 0
                if {$o eq "USER_EXCEPTION:Busy"} {
                    array set m [lindex $r 1]
                    set ok [expr {[info exists m(code)] && $m(code) == $size}]
                }
                return [list $o $ok]
            }
            return [list NO_EXCEPTION 0]
        }
        dead {
            if {[catch {$dead echoString [string repeat d $size]} r]} {
                set o [exname $r]
                return [list $o [expr {$o eq "SYSTEM_EXCEPTION:OBJECT_NOT_EXIST"}]]
            }
            return [list NO_EXCEPTION 0]
        }
        nonexist {
            if {[catch {$echo _non_existent} r]} { return [list [exname $r] 0] }
            return [list "NON_EXISTENT=[expr {$r ? 1 : 0}]" [expr {!$r}]]
        }
    }
    return [list INTERNAL 0]
}

# a Combat error value {repoid {members}} -> our outcome name
proc exname {err} {
    set id [lindex $err 0]
    if {[regexp {^IDL:omg\.org/CORBA/([A-Z_]+):} $id -> n]} { return "SYSTEM_EXCEPTION:$n" }
    if {[regexp {^IDL:(.*/)?([A-Za-z_0-9]+):[0-9.]+$} $id -> - n]} { return "USER_EXCEPTION:$n" }
    regsub -all {[\s,]+} [string range $err 0 60] _ e
    return "ERROR:$e"
}

set ops {echoString echoOctets echoRecs slow fire fail dead nonexist mix}
set mix {echoString fire fail echoOctets fire dead slow echoRecs nonexist}

if {[catch {set argv [corba::init {*}$argv]} err]} { usage "corba::init: $err" }

set opt(i) ""; set opt(d) ""; set opt(lat) ""; set opt(op) echoString
set opt(size) 32; set opt(n) 100; set opt(q) 0; set opt(ir) ""; set opt(emit-ir) ""
set opt(idl) [file join [file dirname [file normalize [info script]]] bench.idl]
for {set k 0} {$k < [llength $argv]} {incr k} {
    set a [lindex $argv $k]
    switch -- $a {
        -i - -d - -lat - -op - -size - -n - -idl - -ir - -emit-ir {
            if {$k + 1 >= [llength $argv]} { usage "missing value for $a" }
            set opt([string range $a 1 end]) [lindex $argv [incr k]]
        }
        -t - -threads {
            incr k
            if {[lindex $argv $k] ne "1"} { usage "Combat client: one thread only" }
        }
        -q { set opt(q) 1 }
        default { usage "unknown argument '$a'" }
    }
}
if {$opt(i) eq ""} { usage "-i IORFILE is required" }
if {$opt(op) ni $ops} { usage "unknown op '$opt(op)'" }
foreach k {size n} {
    if {![string is digit -strict $opt($k)] || $opt($k) > 10000000} { usage "bad -$k '$opt($k)'" }
}
if {$opt(op) eq "dead" && $opt(d) eq ""} { usage "-op dead needs -d DEADIORFILE" }

# the interface descriptions
if {$opt(ir) ne ""} {
    source $opt(ir)
} else {
    if {[catch {open $opt(idl) r} f]} { puts stderr "combat_client: $f"; exit 2 }
    set text [read $f 1048576]
    close $f
    if {[catch {idl::translate $text} irdata]} { puts stderr "combat_client: $irdata"; exit 2 }
    if {$opt(emit-ir) ne ""} {
        set o [open $opt(emit-ir) w]
        puts $o "# generated from [file tail $opt(idl)] by combat_client.tcl (-emit-ir); same form as idl2tcl output"
        puts $o "package require combat"
        puts $o [list combat::ir add $irdata]
        close $o
    }
    combat::ir add $irdata
}

set echo [corba::string_to_object [read_ior $opt(i)]]
set dead ""
if {$opt(d) ne ""} { set dead [corba::string_to_object [read_ior $opt(d)]] }

set lat ""
if {$opt(lat) ne ""} {
    if {[catch {open $opt(lat) w} lat]} { puts stderr "combat_client: $lat"; exit 2 }
    puts $lat "thread,seq,op,size,t_start_ns,t_end_ns,latency_ns,outcome"
}

set calls 0
set bad 0
set bad_in_row 0
for {set seq 0} {$seq < $opt(n)} {incr seq} {
    set op $opt(op)
    if {$op eq "mix"} {
        set op [lindex $mix [expr {$seq % [llength $mix]}]]
        if {$op eq "dead" && $dead eq ""} { set op echoString }
    }
    set size $opt(size)
    if {$op eq "fail"} { set size $seq }
    if {$op eq "nonexist"} { set size 0 }
    set t0 [now_ns]
    lassign [do_call $op $size $seq] outcome ok
    set t1 [now_ns]
    incr calls
    if {$lat ne ""} {
        puts $lat "0,$seq,$op,$size,$t0,$t1,[expr {$t1 - $t0}],$outcome"
    }
    if {$ok} {
        set bad_in_row 0
    } else {
        incr bad
        if {!$opt(q)} { puts stderr "combat_client: seq $seq $op: unexpected $outcome" }
        if {[incr bad_in_row] >= 20} {
            puts stderr "combat_client: 20 bad calls in a row, stopping"
            break
        }
    }
}
if {$lat ne ""} { close $lat }
catch {corba::release $echo}
if {$dead ne ""} { catch {corba::release $dead} }
# let Combat's event loop flush anything still queued (oneways) before the socket closes
set ::flushed 0
after 100 {set ::flushed 1}
vwait ::flushed
puts stderr "client: calls=$calls bad=$bad"
exit [expr {$bad > 0 ? 1 : 0}]
