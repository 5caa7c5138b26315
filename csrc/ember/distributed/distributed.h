#pragma once
// ember::distributed: stores, process groups (Gloo on the CPU) and DDP's gradient reducer.
#include "ember/distributed/errors.h"
#include "ember/distributed/process_group.h"
#include "ember/distributed/reducer.h"
#include "ember/distributed/store.h"
#include "ember/distributed/ddp.h"
