variable "subscription_id" {
  description = "Azure subscription to create the cluster in."
  type        = string
}

variable "service_principal_name" {
  description = "Display name of the existing service principal (Azure AD application) the benchmark authenticates as; it becomes admin of the database."
  type        = string
}

variable "location" {
  description = "Azure region."
  type        = string
  default     = "westeurope"
}

variable "resource_group_name" {
  description = "Resource group created for the cluster."
  type        = string
  default     = "iotdb-bench-adx"
}

variable "cluster_name" {
  description = "Name of the Kusto cluster: 4 to 22 lowercase letters and digits, starting with a letter; part of its URI."
  type        = string
  default     = "iotdbbench"

  validation {
    condition     = can(regex("^[a-z][a-z0-9]{3,21}$", var.cluster_name))
    error_message = "cluster_name must be 4-22 lowercase letters and digits and start with a letter."
  }
}

variable "database_name" {
  description = "Name of the database the benchmark writes to."
  type        = string
  default     = "iotbench"
}

variable "sku_name" {
  description = "Cluster SKU. The published results used Standard_L8s_v2 (storage optimized) and Standard_E8a_v4 (compute optimized); the default is the cheapest development SKU."
  type        = string
  default     = "Dev(No SLA)_Standard_E2a_v4"
}

variable "sku_capacity" {
  description = "Number of cluster instances (the published results used 2; development SKUs allow only 1)."
  type        = number
  default     = 1

  validation {
    condition     = var.sku_capacity >= 1
    error_message = "sku_capacity must be at least 1."
  }
}

variable "hot_cache_period" {
  description = "How long data stays in the hot cache (ISO 8601 duration)."
  type        = string
  default     = "P7D"
}

variable "soft_delete_period" {
  description = "How long data is kept (ISO 8601 duration)."
  type        = string
  default     = "P31D"
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default = {
    purpose = "iotdb-bench"
  }
}
