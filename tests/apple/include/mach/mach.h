/* mach/mach.h: host_processor_info and what it needs (tests/apple/README). */
typedef unsigned int natural_t;
typedef int integer_t;
typedef int kern_return_t;
typedef natural_t mach_port_t;
typedef mach_port_t host_t;
typedef mach_port_t vm_map_t;
typedef unsigned long vm_address_t;
typedef unsigned long vm_size_t;
typedef natural_t mach_msg_type_number_t;
typedef int processor_flavor_t;
typedef integer_t *processor_info_array_t;
#define KERN_SUCCESS 0
#define PROCESSOR_CPU_LOAD_INFO 2
#define CPU_STATE_MAX 4
#define CPU_STATE_USER 0
#define CPU_STATE_SYSTEM 1
#define CPU_STATE_IDLE 2
#define CPU_STATE_NICE 3
extern mach_port_t mach_task_self_;
#define mach_task_self() mach_task_self_
mach_port_t mach_host_self(void);
kern_return_t host_processor_info(host_t host, processor_flavor_t flavor,
    natural_t *out_processor_count, processor_info_array_t *out_processor_info,
    mach_msg_type_number_t *out_processor_infoCnt);
kern_return_t vm_deallocate(vm_map_t target_task, vm_address_t address,
    vm_size_t size);
